// export: the cache as one file, so CI can move it as a single artifact
// (layout in archive_format.h; import in archive_import.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "cache/archive/archive.h"
#include "cache/archive/archive_format.h"
#include "cache/hash/sha256.h"
#include "cache/records.h"

namespace lexpack::cache {

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

// Collects output in a large buffer and writes it with few write(2) calls.
class ArchiveWriter {
 public:
  // With a secret, every byte written is signed (see archive_format.h).
  ArchiveWriter(int fd, const std::string& secret) : fd_(fd) {
    if (!secret.empty()) {
      mac_.emplace(secret);
      mac_->update(kSignatureDomain);
    }
  }
  base::Status entry(uint32_t type, std::string_view head, std::string_view body) {
    FixedWriter w;
    w.u32(type);
    w.u64(head.size() + body.size());
    base::Status s = put(w.bytes());
    if (s.ok()) s = put(head);
    if (s.ok()) {
      // The end entry's signature covers everything before it.
      if (type == kEnd && mac_) {
        Sha256Digest d = mac_->finish();
        mac_.reset();
        std::memcpy(signature_, d.data(), d.size());
        body = std::string_view(signature_, sizeof signature_);
      }
      s = put(body);
    }
    Hasher h;
    h.field(type);
    h.field(static_cast<uint64_t>(head.size() + body.size()));
    h.update(head);
    h.update(body);
    FixedWriter sum;
    sum.u64(h.digest().lo);
    if (s.ok()) s = put(sum.bytes());
    return s;
  }
  bool signing() const { return mac_.has_value(); }
  base::Status put(std::string_view bytes) {
    if (mac_) mac_->update(bytes);
    if (buffer_.size() + bytes.size() > kWriteBuffer) {
      base::Status s = drain();
      if (!s.ok()) return s;
      if (bytes.size() > kWriteBuffer) return write_all(bytes);
    }
    buffer_.append(bytes);
    return {};
  }
  base::Status drain() {
    base::Status s = write_all(buffer_);
    buffer_.clear();
    return s;
  }

 private:
  base::Status write_all(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return base::Status::error(std::string("write: ") + errno_text());
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return {};
  }
  int fd_;
  std::string buffer_;
  std::optional<HmacSha256> mac_;
  char signature_[kSignatureBytes];
};

// A record's entry type in the archive; an action's payload is its key, then
// its value.
uint32_t entry_type(RecordKind kind) {
  switch (kind) {
    case RecordKind::kFile:
      return kFile;
    case RecordKind::kAction:
      return kAction;
    case RecordKind::kMemo:
      break;
  }
  return kMemo;
}

}  // namespace

base::Status export_archive(Store& store, const std::string& file) {
  store.flush();
  base::Result<StoreEntries> entries = store.list_entries();
  if (!entries.ok()) return entries.status();
  base::Status st;

  // A fresh name, created exclusively and never through a symlink: the
  // archive's directory may be shared (/tmp), and a planted link must not
  // make this process overwrite someone's file.
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    tmp = file + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(attempt);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return base::Status::error(tmp + ": cannot create: " + errno_text());
  ArchiveWriter out(fd, store.archive_secret());
  FixedWriter header;
  header.bytes().append(kMagic, sizeof kMagic);
  header.u32(kArchiveVersion);
  header.u32(0);
  st = out.put(header.bytes());
  uint64_t count = 0;
  for (const StoredBlob& b : entries->blobs) {
    if (!st.ok()) break;
    std::optional<std::string_view> bytes = store.read_stored_blob(b);
    if (!bytes) continue;  // damaged: not exported
    st = out.entry(b.page_aligned ? kAlignedBlob : kBlob, hash_key(b.id), *bytes);
    ++count;
  }
  for (const StoredRecord& r : entries->records) {
    if (!st.ok()) break;
    st = out.entry(entry_type(r.kind), r.kind == RecordKind::kAction ? r.key + r.value : r.value,
                   "");
    ++count;
  }
  FixedWriter end;
  end.u64(count);
  // Signed: the end entry also holds the signature (its body, filled in by
  // the writer); its length says so.
  std::string room(out.signing() ? kSignatureBytes : 0, '\0');
  if (st.ok()) st = out.entry(kEnd, end.bytes(), room);
  if (st.ok()) st = out.drain();
  if (st.ok() && ::fsync(fd) != 0) st = base::Status::error(std::string("fsync: ") + errno_text());
  ::close(fd);
  if (st.ok() && ::rename(tmp.c_str(), file.c_str()) != 0) {
    st = base::Status::error(std::string("rename: ") + errno_text());
  }
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    return base::Status::error(file + ": export failed: " + st.message());
  }
  return {};
}

}  // namespace lexpack::cache
