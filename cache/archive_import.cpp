// import: an archive into the store, all or nothing. A first pass reads the
// whole file in fixed-size chunks and checks every entry (checksum, blob
// hash, record decoding) with memory bounded by the chunk and the records'
// real bytes; only then does a second pass store blobs and commit records.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/file_util.h"
#include "cache/archive_format.h"
#include "cache/sha256.h"
#include "cache/store_impl.h"

namespace lexpack::cache {

namespace {

constexpr size_t kChunk = 1u << 20;

class ArchiveFile {
 public:
  explicit ArchiveFile(int fd) : fd_(fd) {}
  bool read_at(uint64_t pos, uint64_t n, std::string* out) const {
    return base::pread_all(fd_, pos, n, out);
  }
  // Calls fn with [pos, pos + n) in chunks of at most kChunk bytes. A chunk
  // that lies in a hole of a sparse file is handed over as zeros unread: a
  // huge claim on a small file costs hashing, not reading.
  template <typename Fn>
  bool stream(uint64_t pos, uint64_t n, Fn&& fn) {
    static const std::string zeros(kChunk, '\0');
    uint64_t data = 0;  // no data before this offset (a hole up to it)
    while (n > 0) {
      uint64_t part = std::min<uint64_t>(n, kChunk);
      if (data <= pos) {
        off_t next = ::lseek(fd_, static_cast<off_t>(pos), SEEK_DATA);
        data = next >= 0 ? static_cast<uint64_t>(next) : (errno == ENXIO ? ~uint64_t{0} : pos);
      }
      if (data >= pos + part) {
        fn(std::string_view(zeros.data(), part));
      } else if (read_at(pos, part, &chunk_)) {
        fn(std::string_view(chunk_));
      } else {
        return false;
      }
      pos += part;
      n -= part;
    }
    return true;
  }

 private:
  int fd_;
  std::string chunk_;
};

struct BlobEntry {
  uint64_t pos;     // of the blob's bytes in the file
  uint64_t length;  // of the blob's bytes
  BlobId id;
  bool aligned;
};

}  // namespace

base::Result<ImportReport> StoreImpl::import_from(const std::string& file) {
  if (!index_) return base::Status::error(dir_ + ": the index is not open");
  if (read_only_) return base::Status::error(dir_ + ": the cache is read-only");
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return base::Status::error(file + ": cannot open: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return base::Status::error(file + ": fstat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return base::Status::error(file + ": not a regular file");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  ArchiveFile in(fd);
  auto bad = [&](uint64_t pos, const std::string& why) {
    return base::Status::error(file + ": offset " + std::to_string(pos) + ": " + why +
                               "; nothing imported");
  };

  std::string buf;
  if (size < 16 || !in.read_at(0, 16, &buf) || std::memcmp(buf.data(), kMagic, 8) != 0) {
    return bad(0, "not a lexpack archive");
  }
  FixedReader hr(std::string_view(buf).substr(8));
  if (uint32_t v = hr.u32(); v != kArchiveVersion) {
    return bad(8, "archive version " + std::to_string(v) + " is not supported");
  }

  // Pass 1: check everything; nothing is stored yet. Every byte before the
  // signature goes through the signature check as it is read.
  const std::string& secret =
      options_.remote_secret.empty() ? config_.remote_secret : options_.remote_secret;
  HmacSha256 mac(secret);
  mac.update(kSignatureDomain);
  mac.update(std::string_view(buf).substr(0, 16));
  ImportReport report;
  std::vector<BlobEntry> blobs;
  std::vector<std::pair<Table, std::pair<std::string, std::string>>> records;  // key, value
  uint64_t pos = 16, count = 0;
  bool ended = false;
  while (!ended) {
    if (pos == size) return bad(pos, "the file is truncated (no end marker)");
    if (size - pos < 12 || !in.read_at(pos, 12, &buf)) return bad(pos, "truncated entry header");
    if (!secret.empty()) mac.update(buf);
    FixedReader er(buf);
    uint32_t type = er.u32();
    uint64_t length = er.u64();
    if (length > kMaxEntryBytes || length > size - pos - 12 || size - pos - 12 - length < 8) {
      return bad(pos, "entry claims " + std::to_string(length) +
                          " bytes, more than the file holds or than allowed");
    }
    const bool is_blob = type == kBlob || type == kAlignedBlob;
    if (is_blob && length < 16) return bad(pos, "blob entry too short");
    // The checksum (and a blob's own hash) streamed: no memory in proportion
    // to what the entry claims, so a lie costs one read, not its size.
    Hasher sum, content;
    sum.field(type);
    sum.field(length);
    std::string head;  // a blob's id
    if (!in.stream(pos + 12, length, [&](std::string_view part) {
          sum.update(part);
          if (!is_blob) return;
          if (head.size() < 16) {
            size_t take = std::min<size_t>(part.size(), 16 - head.size());
            head.append(part.substr(0, take));
            part.remove_prefix(take);
          }
          content.update(part);
        })) {
      return bad(pos, "read failed");
    }
    if (!in.read_at(pos + 12 + length, 8, &buf)) return bad(pos, "read failed");
    FixedReader sr(buf);
    if (sr.u64() != sum.digest().lo) return bad(pos, "entry checksum mismatch");
    if (!secret.empty()) {
      // Signed bytes only once the checksum holds, so a false claim costs no
      // SHA-256 over what it claims.
      std::string checksum = buf;
      uint64_t signed_length = type == kEnd ? std::min<uint64_t>(length, 8) : length;
      if (!in.stream(pos + 12, signed_length, [&](std::string_view part) { mac.update(part); })) {
        return bad(pos, "read failed");
      }
      if (type != kEnd) mac.update(checksum);
    }
    // A record is read whole only once its checksum holds.
    std::string payload;
    if (!is_blob && !in.read_at(pos + 12, length, &payload)) return bad(pos, "read failed");
    switch (type) {
      case kBlob:
      case kAlignedBlob: {
        BlobId id = key_hash(head);
        if (content.digest() != id)
          return bad(pos, "blob " + id.hex() + " does not match its hash");
        blobs.push_back({pos + 12 + 16, length - 16, id, type == kAlignedBlob});
        ++report.blobs;
        break;
      }
      case kFile: {
        std::string path;
        if (!decode_file_record(payload, &path)) return bad(pos, "damaged file record");
        records.push_back({Table::kFiles, {file_key(path), payload}});
        ++report.files;
        break;
      }
      case kAction: {
        if (length < 16 || !decode_action_record(std::string_view(payload).substr(16))) {
          return bad(pos, "damaged action record");
        }
        records.push_back({Table::kActions, {payload.substr(0, 16), payload.substr(16)}});
        ++report.actions;
        break;
      }
      case kMemo: {
        std::string_view t, k, v;
        if (!decode_memo(payload, &t, &k, &v)) return bad(pos, "damaged memo record");
        records.push_back({Table::kMemo, {memo_key(t, k), payload}});
        ++report.memos;
        break;
      }
      case kEnd: {
        if (length != 8 && length != 8 + kSignatureBytes) return bad(pos, "damaged end marker");
        FixedReader cr(std::string_view(payload).substr(0, 8));
        uint64_t expected = cr.u64();
        if (expected != count) {
          return bad(pos, "end marker counts " + std::to_string(expected) + " entries, found " +
                              std::to_string(count));
        }
        if (pos + 12 + length + 8 != size) return bad(pos, "bytes after the end marker");
        report.signed_archive = length == 8 + kSignatureBytes;
        if (!secret.empty()) {
          if (!report.signed_archive) {
            return bad(pos,
                       "the archive is not signed, and a remote_secret is set: only "
                       "archives signed with it are imported");
          }
          Sha256Digest want = mac.finish(), got;
          std::memcpy(got.data(), payload.data() + 8, got.size());
          if (!digests_equal(want, got)) {
            return bad(pos,
                       "the signature does not match the remote_secret (signed with "
                       "another secret, or changed since)");
          }
          report.signature_checked = true;
        }
        ended = true;
        break;
      }
      default:
        return bad(pos, "unknown entry type " + std::to_string(type));
    }
    if (type != kEnd) ++count;
    pos += 12 + length + 8;
  }

  // Pass 2: store the blobs in batches, then every record in one transaction.
  // A blob is read again and stored only if it still has its checked hash.
  uint64_t stored = 0;
  auto failed = [&](const std::string& why) {
    return base::Status::error(file + ": import failed: " + why + "; no record was imported" +
                               (stored ? " (" + std::to_string(stored) +
                                             " blobs were stored; unused, they go with the next "
                                             "eviction)"
                                       : std::string()));
  };
  for (int aligned = 0; aligned < 2; ++aligned) {
    std::vector<std::string> batch;
    size_t batch_bytes = 0;
    auto flush = [&]() -> base::Status {
      if (batch.empty()) return {};
      std::vector<std::string_view> views(batch.begin(), batch.end());
      BlobOptions options;
      options.page_aligned = aligned == 1;
      auto ids = put_blobs(views, options);
      if (ids.ok()) stored += batch.size();
      batch.clear();
      batch_bytes = 0;
      return ids.status();
    };
    for (const BlobEntry& b : blobs) {
      if (b.aligned != (aligned == 1)) continue;
      std::string bytes;
      if (!in.read_at(b.pos, b.length, &bytes) || hash_bytes(bytes) != b.id) {
        return failed("blob " + b.id.hex() + " changed while it was imported");
      }
      batch_bytes += bytes.size();
      batch.push_back(std::move(bytes));
      if (batch_bytes >= kImportBatchBytes) {
        if (base::Status s = flush(); !s.ok()) return failed(s.message());
      }
    }
    if (base::Status s = flush(); !s.ok()) return failed(s.message());
  }
  base::Status s = index_->write([&](Txn& t) {
    for (const auto& [table, kv] : records) {
      base::Status p = t.put(table, kv.first, seal(table_name(table), kv.first, kv.second));
      if (!p.ok()) return p;
    }
    return base::Status();
  });
  if (!s.ok()) return failed(after_failure(s).message());
  return report;
}

}  // namespace lexpack::cache
