// export: the cache as one file, so CI can move it as a single artifact
// (layout in archive_format.h; import in archive_import.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "cache/archive_format.h"
#include "cache/hash/sha256.h"
#include "cache/store_impl.h"

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

}  // namespace

base::Status StoreImpl::export_to(const std::string& file) {
  if (!index_) return base::Status::error(dir_ + ": the index is not open");
  flush();
  struct BlobRef {
    BlobId id;
    BlobLocation loc;
  };
  std::vector<BlobRef> blobs;
  std::vector<std::pair<uint32_t, std::string>> records;  // type, payload
  base::Status st = index_->read([&](Txn& t) {
    base::Status s = t.each(Table::kBlobs, "", [&](std::string_view key, std::string_view raw) {
      auto value = unseal("blobs", key, raw);
      auto loc = value ? decode_blob_location(*value) : std::nullopt;
      if (loc && key.size() == 16) blobs.push_back(BlobRef{key_hash(key), *loc});
      return true;
    });
    if (!s.ok()) return s;
    s = t.each(Table::kFiles, "", [&](std::string_view key, std::string_view raw) {
      if (auto v = unseal("files", key, raw)) records.emplace_back(kFile, std::string(*v));
      return true;
    });
    if (!s.ok()) return s;
    s = t.each(Table::kActions, "", [&](std::string_view key, std::string_view raw) {
      if (auto v = unseal("actions", key, raw)) {
        records.emplace_back(kAction, std::string(key) + std::string(*v));
      }
      return true;
    });
    if (!s.ok()) return s;
    return t.each(Table::kMemo, "", [&](std::string_view key, std::string_view raw) {
      if (auto v = unseal("memo", key, raw)) records.emplace_back(kMemo, std::string(*v));
      return true;
    });
  });
  if (!st.ok()) return after_failure(st);

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
  ArchiveWriter out(
      fd, options_.remote_secret.empty() ? config_.remote_secret : options_.remote_secret);
  FixedWriter header;
  header.bytes().append(kMagic, sizeof kMagic);
  header.u32(kArchiveVersion);
  header.u32(0);
  st = out.put(header.bytes());
  uint64_t count = 0;
  for (const auto& b : blobs) {
    if (!st.ok()) break;
    auto bytes = packs_->view(b.loc.pack, b.loc.offset, b.loc.size);
    if (!bytes.ok() || hash_bytes(bytes.value()) != b.id) continue;  // damaged: not exported
    uint32_t type = (b.loc.flags & kBlobPageAligned) ? kAlignedBlob : kBlob;
    st = out.entry(type, hash_key(b.id), bytes.value());
    ++count;
  }
  for (const auto& [type, payload] : records) {
    if (!st.ok()) break;
    st = out.entry(type, payload, "");
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
