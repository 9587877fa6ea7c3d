// The file table side of the fast path: stat, compare with the recorded
// signature, and only on a mismatch read, hash and lex the file again.
#include "ninja_integration/file_state.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "lexer/scanner.h"
#include "ninja_integration/byte_codec.h"
#include "ninja_integration/scan_file_cache.h"

namespace lexpack::ninja {
namespace {

constexpr std::string_view kSummaryTag = "lexpack-summary-2";
constexpr int64_t kSettleNs = 1'000'000'000;

bool is_include_like(lexer::DirectiveKind k) {
  using K = lexer::DirectiveKind;
  return k == K::kInclude || k == K::kIncludeNext || k == K::kImport || k == K::kHasInclude ||
         k == K::kHasIncludeNext;
}

}  // namespace

cache::StatSignature signature_of(const struct stat& st) {
  cache::StatSignature sig;
  sig.dev = uint64_t(st.st_dev);
  sig.ino = uint64_t(st.st_ino);
  sig.size = uint64_t(st.st_size);
  sig.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  sig.ctime_ns = int64_t(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
  return sig;
}

bool stat_file(const std::string& path, cache::StatSignature* sig, bool* is_dir) {
  struct stat st;
  if (is_dir) *is_dir = false;
  if (::stat(path.empty() ? "." : path.c_str(), &st) != 0) return false;
  if (is_dir) *is_dir = S_ISDIR(st.st_mode);
  if (!S_ISREG(st.st_mode)) return false;
  *sig = signature_of(st);
  return true;
}

bool stat_dir(const std::string& path, cache::StatSignature* sig) {
  struct stat st;
  if (::stat(path.empty() ? "." : path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  *sig = signature_of(st);
  return true;
}

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.empty() ? "." : path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

bool signature_is_settled(const cache::StatSignature& sig, int64_t now) {
  return sig.mtime_ns + kSettleNs <= now && sig.ctime_ns + kSettleNs <= now;
}

std::string encode_summary(const FileSummary& s) {
  ByteWriter w;
  w.str(kSummaryTag);
  w.u64(s.content.lo);
  w.u64(s.content.hi);
  w.u8(uint8_t((s.uses_date ? 1 : 0) | (s.uses_time ? 2 : 0)));
  w.u64(s.includes.size());
  for (const IncludeDirective& d : s.includes) {
    w.u8(uint8_t(d.kind));
    w.u8(uint8_t((d.angled ? 1 : 0) | (d.computed ? 2 : 0)));
    w.str(d.name);
  }
  return w.take();
}

bool decode_summary(std::string_view bytes, FileSummary* s) {
  ByteReader r(bytes);
  std::string tag;
  uint8_t flags = 0;
  uint64_t n = 0;
  if (!r.str(&tag) || tag != kSummaryTag || !r.u64(&s->content.lo) || !r.u64(&s->content.hi) ||
      !r.u8(&flags) || !r.u64(&n) || n > bytes.size()) {
    return false;
  }
  s->uses_date = flags & 1;
  s->uses_time = flags & 2;
  s->includes.clear();
  s->includes.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    IncludeDirective d;
    uint8_t kind = 0, f = 0;
    if (!r.u8(&kind) || !r.u8(&f) || !r.str(&d.name)) return false;
    d.kind = lexer::DirectiveKind(kind);
    if (!is_include_like(d.kind)) return false;
    d.angled = f & 1;
    d.computed = f & 2;
    s->includes.push_back(std::move(d));
  }
  return r.done();
}

FileSummary summarize(const lexer::ScanResult& scan, const cache::Hash128& content) {
  FileSummary s;
  s.content = content;
  s.uses_date = scan.uses_date;
  s.uses_time = scan.uses_time || scan.uses_timestamp;
  for (const lexer::Directive& d : scan.directives) {
    if (!is_include_like(d.kind)) continue;
    s.includes.push_back({d.kind, d.angled, d.computed, std::string(scan.text(d))});
  }
  return s;
}

bool read_file(const std::string& path, std::string* bytes, std::string* err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st;
  bytes->clear();
  if (::fstat(fd, &st) == 0 && st.st_size > 0) bytes->reserve(size_t(st.st_size));
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *err = "cannot read " + path + ": " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    bytes->append(buf, size_t(n));
  }
  ::close(fd);
  return true;
}

std::string absolute_path(const std::string& path, const std::string& cwd) {
  if (!path.empty() && path[0] == '/') return path;
  if (path.empty()) return cwd;
  return cwd + "/" + path;
}

std::string normal_path(const std::string& path, const std::string& dir) {
  std::string abs = absolute_path(path, dir);
  size_t last = abs.rfind('/');
  std::string_view tail = last == std::string::npos ? std::string_view() : abs.substr(last + 1);
  // The common case by hand (lexically_normal allocates per component): an
  // absolute path not starting with "//" whose last component is a name.
  if (abs.size() < 2 || abs[0] != '/' || abs[1] == '/' || tail.empty() || tail == "." ||
      tail == "..") {
    return std::filesystem::path(abs).lexically_normal().string();
  }
  std::string out;
  out.reserve(abs.size());
  for (size_t i = 0; i < abs.size();) {
    size_t end = abs.find('/', i);
    if (end == std::string::npos) end = abs.size();
    std::string_view part(abs.data() + i, end - i);
    if (part == "..") {
      out.resize(out.rfind('/') == std::string::npos ? 0 : out.rfind('/'));
    } else if (!part.empty() && part != ".") {
      out.push_back('/');
      out.append(part);
    }
    i = end + 1;
  }
  return out;
}

cache::Result<FileSummary> FileStates::load(const std::string& path, const std::string& key_path,
                                            const cache::StatSignature& sig) {
  if (store_) {
    if (std::optional<cache::FileRecord> rec = store_->get_file(key_path)) {
      if (rec->stat == sig && !rec->scan_result.is_zero()) {
        if (std::optional<std::string_view> blob = store_->get_blob(rec->scan_result)) {
          FileSummary s;
          if (decode_summary(*blob, &s) && s.content == rec->content) return s;
        }
      }
    }
  }
  std::string bytes, err;
  if (!read_file(path, &bytes, &err)) return cache::Status::error(err);
  ++files_read_;
  cache::StatSignature after;
  if (!stat_file(path, &after) || !(after == sig)) {
    return cache::Status::error(path + " changed while it was read");
  }
  cache::Hash128 content = cache::hash_bytes(bytes);
  // Each thread scans into one result whose memory is reused file after file.
  thread_local lexer::ScanResult scanned;
  lexer::scan_into(bytes, *kernel_, &scanned);
  FileSummary s = summarize(scanned, content);
  if (store_ && signature_is_settled(sig, now_ns())) {
    cache::Result<cache::BlobId> blob = store_->put_blob(encode_summary(s));
    if (blob.ok()) store_->put_file(key_path, cache::FileRecord{sig, content, blob.value()});
  }
  return s;
}

cache::Result<std::shared_ptr<const FileSummary>> FileStates::load_shared(
    const std::string& path, const std::string& key_path, const cache::StatSignature& sig) {
  if (shared_) {
    if (std::shared_ptr<const FileSummary> s = shared_->find_summary(key_path, sig)) return s;
  }
  cache::Result<FileSummary> loaded = load(path, key_path, sig);
  if (!loaded.ok()) return loaded.status();
  auto s = std::make_shared<const FileSummary>(std::move(loaded.value()));
  if (shared_) shared_->put_summary(key_path, sig, s);
  return s;
}

cache::Result<cache::Hash128> FileStates::content_hash(const std::string& path,
                                                       const std::string& key_path,
                                                       const cache::StatSignature& sig) {
  if (store_) {
    if (std::optional<cache::FileRecord> rec = store_->get_file(key_path)) {
      if (rec->stat == sig) return rec->content;
    }
  }
  std::string bytes, err;
  if (!read_file(path, &bytes, &err)) return cache::Status::error(err);
  ++files_read_;
  cache::StatSignature after;
  if (!stat_file(path, &after) || !(after == sig)) {
    return cache::Status::error(path + " changed while it was read");
  }
  cache::Hash128 content = cache::hash_bytes(bytes);
  if (store_ && signature_is_settled(sig, now_ns())) {
    // Keep a scan result already recorded for this content.
    cache::BlobId scan;
    if (std::optional<cache::FileRecord> rec = store_->get_file(key_path)) {
      if (rec->content == content) scan = rec->scan_result;
    }
    store_->put_file(key_path, cache::FileRecord{sig, content, scan});
  }
  return content;
}

}  // namespace lexpack::ninja
