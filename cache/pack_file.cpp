// Pack file I/O: one read-only mapping per pack, appends with few large
// pwritev calls under an exclusive flock. See pack_file.h.
#include "cache/pack_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace lexpack::cache {

namespace {

constexpr size_t kMaxIov = 512;
alignas(4096) const char kZeros[kPageSize] = {};

uint64_t align_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

std::string errno_text() {
  return std::strerror(errno);
}

// Holds an exclusive flock for the life of the object.
class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {
    while ((ok_ = ::flock(fd_, LOCK_EX) == 0) == false && errno == EINTR) {
    }
  }
  ~FileLock() {
    if (ok_) ::flock(fd_, LOCK_UN);
  }
  bool ok() const { return ok_; }

 private:
  int fd_;
  bool ok_ = false;
};

}  // namespace

PackSet::~PackSet() {
  for (auto& [n, p] : packs_) {
    for (auto& m : p.maps) ::munmap(const_cast<char*>(m.addr), m.length);
    if (p.fd >= 0) ::close(p.fd);
  }
  for (auto& m : retired_) ::munmap(const_cast<char*>(m.addr), m.length);
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

int PackSet::release_dir() {
  int fd = dir_fd_;
  dir_fd_ = -1;
  return fd;
}

std::string PackSet::name(uint32_t pack) {
  char name[32];
  std::snprintf(name, sizeof name, "pack-%08u.lpk", pack);
  return name;
}

std::string PackSet::path(uint32_t pack) const {
  return dir_ + "/" + name(pack);
}

bool PackSet::parse_name(std::string_view name, uint32_t* pack) {
  if (name.size() != 17 || name.substr(0, 5) != "pack-" || name.substr(13) != ".lpk") {
    return false;
  }
  uint32_t v = 0;
  for (char c : name.substr(5, 8)) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  *pack = v;
  return true;
}

base::Result<PackSet::Pack*> PackSet::open_pack(uint32_t pack, bool for_write) {
  Pack& p = packs_[pack];
  if (p.fd >= 0 && (p.writable || !for_write)) return &p;
  if (for_write && read_only_) return base::Status::error(path(pack) + ": the cache is read-only");
  if (dir_fd_ < 0) return base::Status::error(path(pack) + ": pack file is missing");
  int flags = for_write ? (O_RDWR | O_CREAT) : O_RDONLY;
  auto fd = open_cache_file(dir_fd_, name(pack), flags, modes_, path(pack));
  if (!fd.ok() && !for_write && errno == ENOENT) {
    return base::Status::error(path(pack) + ": pack file is missing");
  }
  if (!fd.ok()) return fd.status();
  if (p.fd >= 0) ::close(p.fd);
  p.fd = *fd;
  p.writable = for_write;
  return &p;
}

base::Result<std::string_view> PackSet::view(uint32_t pack, uint64_t offset, uint64_t size) {
  auto opened = open_pack(pack, false);
  if (!opened.ok()) return opened.status();
  Pack* p = opened.value();
  uint64_t end = offset + size;
  if (end < offset) return base::Status::error(path(pack) + ": blob range overflows");
  if (end > p->known_size) {
    struct stat st;
    if (::fstat(p->fd, &st) != 0)
      return base::Status::error(path(pack) + ": fstat: " + errno_text());
    p->known_size = static_cast<uint64_t>(st.st_size);
    if (end > p->known_size) {
      return base::Status::error(path(pack) + ": blob at offset " + std::to_string(offset) +
                                 " size " + std::to_string(size) +
                                 " lies past the end of the pack (" +
                                 std::to_string(p->known_size) + " bytes)");
    }
  }
  if (size == 0) return std::string_view();
  if (p->maps.empty() || end > p->maps.back().length) {
    // Map the whole pack size up front, so that later appends need no new
    // mapping; only a pack grown past that (a huge blob) gets a second one.
    size_t length = align_up(std::max(pack_size_, p->known_size), kPageSize);
    void* addr = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, p->fd, 0);
    if (addr == MAP_FAILED) return base::Status::error(path(pack) + ": mmap: " + errno_text());
    p->maps.push_back(Mapping{static_cast<const char*>(addr), length});
  }
  return std::string_view(p->maps.back().addr + offset, size);
}

base::Status PackSet::file_id(uint32_t pack, uint64_t* dev, uint64_t* ino) {
  auto opened = open_pack(pack, false);
  if (!opened.ok()) return opened.status();
  struct stat st;
  if (::fstat(opened.value()->fd, &st) != 0) {
    return base::Status::error(path(pack) + ": fstat: " + errno_text());
  }
  *dev = static_cast<uint64_t>(st.st_dev);
  *ino = static_cast<uint64_t>(st.st_ino);
  return {};
}

base::Status PackSet::append(uint32_t pack, const std::vector<PackPiece>& pieces,
                             std::vector<uint64_t>* offsets, bool* full) {
  *full = false;
  offsets->clear();
  auto opened = open_pack(pack, true);
  if (!opened.ok()) return opened.status();
  Pack* p = opened.value();
  FileLock lock(p->fd);
  if (!lock.ok()) return base::Status::error(path(pack) + ": flock: " + errno_text());
  struct stat st;
  if (::fstat(p->fd, &st) != 0) return base::Status::error(path(pack) + ": fstat: " + errno_text());
  const uint64_t start = static_cast<uint64_t>(st.st_size);

  std::vector<iovec> iov;
  uint64_t pos = start;
  auto pad_to = [&](uint64_t target) {
    while (pos < target) {
      uint64_t n = std::min<uint64_t>(target - pos, kPageSize);
      iov.push_back(iovec{const_cast<char*>(kZeros), n});
      pos += n;
    }
  };
  for (const auto& piece : pieces) {
    pad_to(align_up(pos, piece.page_aligned ? kPageSize : kBlobAlignment));
    offsets->push_back(pos);
    if (!piece.bytes.empty()) {
      iov.push_back(iovec{const_cast<char*>(piece.bytes.data()), piece.bytes.size()});
    }
    pos += piece.bytes.size();
    if (piece.page_aligned) pad_to(align_up(pos, kPageSize));
  }
  if (start > 0 && pos > pack_size_) {
    *full = true;
    offsets->clear();
    return {};
  }

  uint64_t at = start;
  size_t i = 0;
  while (i < iov.size()) {
    int count = static_cast<int>(std::min(kMaxIov, iov.size() - i));
    ssize_t n = ::pwritev(p->fd, &iov[i], count, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = n < 0 ? errno_text() : "wrote nothing";
      // Leave no partial tail behind; the bytes were never indexed anyway.
      if (::ftruncate(p->fd, static_cast<off_t>(start)) != 0) {
      }
      offsets->clear();
      return base::Status::error(path(pack) + ": write of " + std::to_string(pos - start) +
                                 " bytes at offset " + std::to_string(start) + ": " + why);
    }
    at += static_cast<uint64_t>(n);
    // Skip what was written, possibly splitting an entry.
    size_t done = static_cast<size_t>(n);
    while (done > 0 && i < iov.size()) {
      if (done >= iov[i].iov_len) {
        done -= iov[i].iov_len;
        ++i;
      } else {
        iov[i].iov_base = static_cast<char*>(iov[i].iov_base) + done;
        iov[i].iov_len -= done;
        done = 0;
      }
    }
  }
  return {};
}

void PackSet::forget(uint32_t pack) {
  auto it = packs_.find(pack);
  if (it == packs_.end()) return;
  for (auto& m : it->second.maps) retired_.push_back(m);
  if (it->second.fd >= 0) ::close(it->second.fd);
  packs_.erase(it);
}

void PackSet::remove(uint32_t pack) {
  if (dir_fd_ >= 0) ::unlinkat(dir_fd_, name(pack).c_str(), 0);
  forget(pack);
}

std::vector<uint32_t> PackSet::list() const {
  std::vector<uint32_t> out;
  if (dir_fd_ < 0) return out;
  int fd = ::openat(dir_fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* d = fd >= 0 ? ::fdopendir(fd) : nullptr;
  if (!d) {
    if (fd >= 0) ::close(fd);
    return out;
  }
  while (struct dirent* e = ::readdir(d)) {
    uint32_t n;
    if (parse_name(e->d_name, &n)) out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t PackSet::file_size(uint32_t pack) const {
  struct stat st;
  if (dir_fd_ < 0 || ::fstatat(dir_fd_, name(pack).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return 0;
  }
  return static_cast<uint64_t>(st.st_size);
}

void PackSet::drop_page_cache() {
  for (auto& [n, p] : packs_) {
    if (p.fd >= 0) ::posix_fadvise(p.fd, 0, 0, POSIX_FADV_DONTNEED);
  }
}

}  // namespace lexpack::cache
