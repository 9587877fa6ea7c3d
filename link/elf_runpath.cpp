// A small reader of an ELF file's dynamic section: the program headers map
// the string table's address to a file offset; DT_RUNPATH and DT_RPATH are
// offsets into it. Bounds are checked on every read.
#include "link/elf_runpath.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include <algorithm>

#include "base/file_util.h"

namespace lexpack::link {
namespace {

constexpr uint32_t kPtLoad = 1, kPtDynamic = 2;
constexpr int64_t kDtNull = 0, kDtStrtab = 5, kDtRpath = 15, kDtRunpath = 29;

// Reads parts of one file by offset.
class File {
 public:
  explicit File(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  bool ok() const { return fd_ >= 0; }
  std::string read(uint64_t at, size_t size) const {
    std::string out(size, '\0');
    ssize_t n = at > uint64_t(INT64_MAX) ? -1 : ::pread(fd_, out.data(), size, off_t(at));
    out.resize(n > 0 ? size_t(n) : 0);
    return out;
  }
  // A little-endian value at `at` (the host is checked to be one).
  template <typename T>
  bool get(uint64_t at, T* out) const {
    std::string b = read(at, sizeof(T));
    if (b.size() != sizeof(T)) return false;
    std::memcpy(out, b.data(), sizeof(T));
    return true;
  }

 private:
  int fd_;
};

struct Segment {
  uint64_t offset = 0, vaddr = 0, size = 0;
};

std::string expand_origin(std::string dir, const std::string& origin) {
  for (std::string_view token : {"${ORIGIN}", "$ORIGIN"}) {
    for (size_t at = dir.find(token); at != std::string::npos; at = dir.find(token, at)) {
      dir.replace(at, token.size(), origin);
      at += origin.size();
    }
  }
  return dir;
}

}  // namespace

std::optional<std::vector<std::string>> elf_runpath_dirs(const std::string& path) {
  const uint16_t probe = 1;
  bool little_host = *reinterpret_cast<const uint8_t*>(&probe) == 1;
  File f(path);
  if (!little_host || !f.ok()) return std::vector<std::string>{};
  std::string ident = f.read(0, 6);
  if (ident.size() != 6 ||
      ident.substr(0, 4) !=
          "\x7f"
          "ELF" ||
      ident[4] != 2 || ident[5] != 1) {
    return std::vector<std::string>{};
  }
  uint64_t phoff = 0;
  uint16_t phentsize = 0, phnum = 0;
  if (!f.get(0x20, &phoff) || !f.get(0x36, &phentsize) || !f.get(0x38, &phnum) || phentsize < 56) {
    return std::vector<std::string>{};
  }
  std::vector<Segment> loads;
  Segment dynamic;
  bool has_dynamic = false;
  for (uint64_t i = 0; i < phnum; ++i) {
    uint64_t at = phoff + i * phentsize;
    uint32_t type = 0;
    Segment s;
    if (!f.get(at, &type) || !f.get(at + 8, &s.offset) || !f.get(at + 16, &s.vaddr) ||
        !f.get(at + 32, &s.size)) {
      return std::vector<std::string>{};
    }
    if (type == kPtLoad) loads.push_back(s);
    if (type == kPtDynamic) {
      dynamic = s;
      has_dynamic = true;
    }
  }
  if (!has_dynamic) return std::vector<std::string>{};
  uint64_t strtab = 0;
  bool has_strtab = false;
  std::vector<uint64_t> paths;
  constexpr uint64_t kMaxDynamic = 1 << 20;
  std::string dyn = f.read(dynamic.offset, size_t(std::min(dynamic.size, kMaxDynamic)));
  for (size_t at = 0; at + 16 <= dyn.size(); at += 16) {
    int64_t tag = 0;
    uint64_t value = 0;
    std::memcpy(&tag, dyn.data() + at, 8);
    std::memcpy(&value, dyn.data() + at + 8, 8);
    if (tag == kDtNull) break;
    if (tag == kDtStrtab) {
      strtab = value;
      has_strtab = true;
    } else if (tag == kDtRunpath || tag == kDtRpath) {
      paths.push_back(value);
    }
  }
  if (paths.empty() || !has_strtab) return std::vector<std::string>{};
  uint64_t strtab_offset = 0;
  bool mapped = false;
  for (const Segment& s : loads) {
    if (strtab >= s.vaddr && strtab - s.vaddr < s.size) {
      strtab_offset = s.offset + (strtab - s.vaddr);
      mapped = true;
      break;
    }
  }
  if (!mapped) return std::vector<std::string>{};
  std::string origin(base::dir_of(path));
  if (origin.empty()) origin = ".";
  std::vector<std::string> dirs;
  for (uint64_t p : paths) {
    std::string rest = f.read(strtab_offset + p, 1 << 16);
    size_t end = rest.find('\0');
    if (end == std::string::npos) return std::nullopt;
    std::string_view list = std::string_view(rest).substr(0, end);
    while (!list.empty()) {
      size_t colon = list.find(':');
      std::string_view d = list.substr(0, colon);
      if (!d.empty()) dirs.push_back(expand_origin(std::string(d), origin));
      list.remove_prefix(colon == std::string_view::npos ? list.size() : colon + 1);
    }
  }
  return dirs;
}

}  // namespace lexpack::link
