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
#include "cache/archive/archive.h"
#include "cache/archive/archive_format.h"
#include "cache/hash/sha256.h"
#include "cache/records.h"

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

// What the first pass found good: the blobs to store, the records to commit.
struct CheckedArchive {
  ImportReport report;
  std::vector<BlobEntry> blobs;
  std::vector<StoredRecord> records;
};

// One entry as the first pass read it, its checksum (and signed bytes) taken.
struct Entry {
  uint32_t type = 0;
  uint64_t length = 0;
  bool is_blob = false;
  std::string head;     // a blob's id
  Hash128 content;      // a blob's hash of the bytes after its id
  std::string payload;  // a record's bytes
};

// The first pass: checks every entry of the archive; nothing is stored.
// Every byte before the signature goes through the signature check as it is
// read.
class ArchiveCheck {
 public:
  ArchiveCheck(ArchiveFile* in, const std::string& file, uint64_t size, const std::string& secret)
      : in_(*in), file_(file), size_(size), secret_(secret), mac_(secret) {}

  base::Status run(CheckedArchive* out) {
    std::string buf;
    if (size_ < 16 || !in_.read_at(0, 16, &buf) || std::memcmp(buf.data(), kMagic, 8) != 0) {
      return bad(0, "not a lexpack archive");
    }
    FixedReader hr(std::string_view(buf).substr(8));
    if (uint32_t v = hr.u32(); v != kArchiveVersion) {
      return bad(8, "archive version " + std::to_string(v) + " is not supported");
    }
    mac_.update(kSignatureDomain);
    mac_.update(std::string_view(buf).substr(0, 16));
    uint64_t pos = 16;
    bool ended = false;
    while (!ended) {
      Entry e;
      if (base::Status s = read_entry(pos, &e); !s.ok()) return s;
      if (base::Status s = take_entry(pos, &e, out, &ended); !s.ok()) return s;
      if (e.type != kEnd) ++count_;
      pos += 12 + e.length + 8;
    }
    return {};
  }

 private:
  base::Status bad(uint64_t pos, const std::string& why) const {
    return base::Status::error(file_ + ": offset " + std::to_string(pos) + ": " + why +
                               "; nothing imported");
  }

  // The entry at `pos`: its header, its checksum (and a blob's own hash)
  // streamed, its signed bytes, and a record's payload once its checksum holds.
  base::Status read_entry(uint64_t pos, Entry* e) {
    std::string buf;
    if (pos == size_) return bad(pos, "the file is truncated (no end marker)");
    if (size_ - pos < 12 || !in_.read_at(pos, 12, &buf)) return bad(pos, "truncated entry header");
    if (!secret_.empty()) mac_.update(buf);
    FixedReader er(buf);
    e->type = er.u32();
    e->length = er.u64();
    const uint64_t length = e->length;
    if (length > kMaxEntryBytes || length > size_ - pos - 12 || size_ - pos - 12 - length < 8) {
      return bad(pos, "entry claims " + std::to_string(length) +
                          " bytes, more than the file holds or than allowed");
    }
    e->is_blob = e->type == kBlob || e->type == kAlignedBlob;
    if (e->is_blob && length < 16) return bad(pos, "blob entry too short");
    // The checksum (and a blob's own hash) streamed: no memory in proportion
    // to what the entry claims, so a lie costs one read, not its size.
    Hasher sum, content;
    sum.field(e->type);
    sum.field(length);
    if (!in_.stream(pos + 12, length, [&](std::string_view part) {
          sum.update(part);
          if (!e->is_blob) return;
          if (e->head.size() < 16) {
            size_t take = std::min<size_t>(part.size(), 16 - e->head.size());
            e->head.append(part.substr(0, take));
            part.remove_prefix(take);
          }
          content.update(part);
        })) {
      return bad(pos, "read failed");
    }
    if (!in_.read_at(pos + 12 + length, 8, &buf)) return bad(pos, "read failed");
    FixedReader sr(buf);
    if (sr.u64() != sum.digest().lo) return bad(pos, "entry checksum mismatch");
    if (!secret_.empty()) {
      // Signed bytes only once the checksum holds, so a false claim costs no
      // SHA-256 over what it claims.
      std::string checksum = buf;
      uint64_t signed_length = e->type == kEnd ? std::min<uint64_t>(length, 8) : length;
      if (!in_.stream(pos + 12, signed_length, [&](std::string_view part) { mac_.update(part); })) {
        return bad(pos, "read failed");
      }
      if (e->type != kEnd) mac_.update(checksum);
    }
    if (e->is_blob) e->content = content.digest();
    // A record is read whole only once its checksum holds.
    if (!e->is_blob && !in_.read_at(pos + 12, length, &e->payload)) return bad(pos, "read failed");
    return {};
  }

  // Decodes the entry read at `pos` into *out; *ended at the end marker.
  base::Status take_entry(uint64_t pos, Entry* e, CheckedArchive* out, bool* ended) {
    const std::string& payload = e->payload;
    ImportReport& report = out->report;
    switch (e->type) {
      case kBlob:
      case kAlignedBlob: {
        BlobId id = key_hash(e->head);
        if (e->content != id) return bad(pos, "blob " + id.hex() + " does not match its hash");
        out->blobs.push_back({pos + 12 + 16, e->length - 16, id, e->type == kAlignedBlob});
        ++report.blobs;
        return {};
      }
      case kFile: {
        std::string path;
        if (!decode_file_record(payload, &path)) return bad(pos, "damaged file record");
        out->records.push_back({RecordKind::kFile, file_key(path), payload});
        ++report.files;
        return {};
      }
      case kAction: {
        if (e->length < 16 || !decode_action_record(std::string_view(payload).substr(16))) {
          return bad(pos, "damaged action record");
        }
        out->records.push_back({RecordKind::kAction, payload.substr(0, 16), payload.substr(16)});
        ++report.actions;
        return {};
      }
      case kMemo: {
        std::string_view t, k, v;
        if (!decode_memo(payload, &t, &k, &v)) return bad(pos, "damaged memo record");
        out->records.push_back({RecordKind::kMemo, memo_key(t, k), payload});
        ++report.memos;
        return {};
      }
      case kEnd:
        *ended = true;
        return check_end(pos, *e, &report);
      default:
        return bad(pos, "unknown entry type " + std::to_string(e->type));
    }
  }

  // The end marker: the entry count, nothing after it, and the signature.
  base::Status check_end(uint64_t pos, const Entry& e, ImportReport* report) {
    const uint64_t length = e.length;
    if (length != 8 && length != 8 + kSignatureBytes) return bad(pos, "damaged end marker");
    FixedReader cr(std::string_view(e.payload).substr(0, 8));
    uint64_t expected = cr.u64();
    if (expected != count_) {
      return bad(pos, "end marker counts " + std::to_string(expected) + " entries, found " +
                          std::to_string(count_));
    }
    if (pos + 12 + length + 8 != size_) return bad(pos, "bytes after the end marker");
    report->signed_archive = length == 8 + kSignatureBytes;
    if (secret_.empty()) return {};
    if (!report->signed_archive) {
      return bad(pos,
                 "the archive is not signed, and a remote_secret is set: only "
                 "archives signed with it are imported");
    }
    Sha256Digest want = mac_.finish(), got;
    std::memcpy(got.data(), e.payload.data() + 8, got.size());
    if (!digests_equal(want, got)) {
      return bad(pos,
                 "the signature does not match the remote_secret (signed with "
                 "another secret, or changed since)");
    }
    report->signature_checked = true;
    return {};
  }

  ArchiveFile& in_;
  const std::string& file_;
  const uint64_t size_;
  const std::string& secret_;
  HmacSha256 mac_;
  uint64_t count_ = 0;  // entries before the end marker
};

}  // namespace

base::Result<ImportReport> import_archive(Store& store, const std::string& file) {
  if (base::Status s = store.check_writable(); !s.ok()) return s;
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return base::Status::error(file + ": cannot open: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return base::Status::error(file + ": fstat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return base::Status::error(file + ": not a regular file");
  ArchiveFile in(fd);

  // Pass 1: check everything; nothing is stored yet.
  const std::string secret = store.archive_secret();
  CheckedArchive checked;
  ArchiveCheck check(&in, file, static_cast<uint64_t>(st.st_size), secret);
  if (base::Status s = check.run(&checked); !s.ok()) return s;

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
      auto ids = store.put_blobs(views, options);
      if (ids.ok()) stored += batch.size();
      batch.clear();
      batch_bytes = 0;
      return ids.status();
    };
    for (const BlobEntry& b : checked.blobs) {
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
  base::Status s = store.put_stored_records(checked.records);
  if (!s.ok()) return failed(s.message());
  return checked.report;
}

}  // namespace lexpack::cache
