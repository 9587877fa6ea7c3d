// export/import: the cache as one file, so CI can move it as a single
// artifact. Layout: a 16-byte header, then entries {type u32, length u64,
// payload, checksum u64}, ending with an end entry that counts them.
// Import checks everything and writes only through the store API.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cache/store_impl.h"

namespace lexpack::cache {

namespace {

constexpr char kMagic[8] = {'L', 'X', 'P', 'K', 'A', 'R', 'C', '\n'};
constexpr uint32_t kArchiveVersion = 1;
constexpr uint64_t kMaxEntryBytes = 4ull << 30;
constexpr size_t kImportBatchBytes = 64u << 20;
constexpr size_t kWriteBuffer = 4u << 20;

enum EntryType : uint32_t {
  kBlob = 1,
  kAlignedBlob = 2,
  kFile = 3,
  kAction = 4,
  kMemo = 5,
  kEnd = 6,
};

uint64_t entry_checksum(uint32_t type, std::string_view payload) {
  Hasher h;
  h.field(type);
  h.field(payload);
  return h.digest().lo;
}

std::string errno_text() {
  return std::strerror(errno);
}

// Collects output in a large buffer and writes it with few write(2) calls.
class ArchiveWriter {
 public:
  explicit ArchiveWriter(int fd) : fd_(fd) {}
  Status entry(uint32_t type, std::string_view head, std::string_view body) {
    ByteWriter w;
    w.u32(type);
    w.u64(head.size() + body.size());
    Status s = put(w.bytes());
    if (s.ok()) s = put(head);
    if (s.ok()) s = put(body);
    Hasher h;
    h.field(type);
    h.field(static_cast<uint64_t>(head.size() + body.size()));
    h.update(head);
    h.update(body);
    ByteWriter sum;
    sum.u64(h.digest().lo);
    if (s.ok()) s = put(sum.bytes());
    return s;
  }
  Status put(std::string_view bytes) {
    if (buffer_.size() + bytes.size() > kWriteBuffer) {
      Status s = drain();
      if (!s.ok()) return s;
      if (bytes.size() > kWriteBuffer) return write_all(bytes);
    }
    buffer_.append(bytes);
    return {};
  }
  Status drain() {
    Status s = write_all(buffer_);
    buffer_.clear();
    return s;
  }

 private:
  Status write_all(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Status::error(std::string("write: ") + errno_text());
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return {};
  }
  int fd_;
  std::string buffer_;
};

}  // namespace

Status StoreImpl::export_to(const std::string& file) {
  if (!index_) return Status::error(dir_ + ": the index is not open");
  flush();
  struct BlobRef {
    BlobId id;
    BlobLocation loc;
  };
  std::vector<BlobRef> blobs;
  std::vector<std::pair<uint32_t, std::string>> records;  // type, payload
  Status st = index_->read([&](Txn& t) {
    Status s = t.each(Table::kBlobs, "", [&](std::string_view key, std::string_view raw) {
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
  if (fd < 0) return Status::error(tmp + ": cannot create: " + errno_text());
  ArchiveWriter out(fd);
  ByteWriter header;
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
  ByteWriter end;
  end.u64(count);
  if (st.ok()) st = out.entry(kEnd, end.bytes(), "");
  if (st.ok()) st = out.drain();
  if (st.ok() && ::fsync(fd) != 0) st = Status::error(std::string("fsync: ") + errno_text());
  ::close(fd);
  if (st.ok() && ::rename(tmp.c_str(), file.c_str()) != 0) {
    st = Status::error(std::string("rename: ") + errno_text());
  }
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    return Status::error(file + ": export failed: " + st.message());
  }
  return {};
}

Result<ImportReport> StoreImpl::import_from(const std::string& file) {
  if (!index_) return Status::error(dir_ + ": the index is not open");
  if (read_only_) return Status::error(dir_ + ": the cache is read-only");
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::error(file + ": cannot open: " + errno_text());
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::error(file + ": fstat: " + errno_text());
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  auto read_at = [&](uint64_t pos, uint64_t n, std::string* out) -> bool {
    out->resize(n);
    uint64_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd, out->data() + done, n - done, static_cast<off_t>(pos + done));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      done += static_cast<uint64_t>(r);
    }
    return true;
  };
  auto bad = [&](uint64_t pos, const std::string& why) {
    return Status::error(file + ": offset " + std::to_string(pos) + ": " + why +
                         "; nothing imported");
  };

  std::string buf;
  if (size < 16 || !read_at(0, 16, &buf) || std::memcmp(buf.data(), kMagic, 8) != 0) {
    return bad(0, "not a lexpack archive");
  }
  ByteReader hr(std::string_view(buf).substr(8));
  if (uint32_t v = hr.u32(); v != kArchiveVersion) {
    return bad(8, "archive version " + std::to_string(v) + " is not supported");
  }

  // Blobs are content-addressed and checked, so they go in as they come;
  // records go in only once the whole file has been read and checked.
  ImportReport report;
  std::vector<std::string> batch[2];
  size_t batch_bytes[2] = {0, 0};
  std::vector<std::pair<Table, std::pair<std::string, std::string>>> records;  // key, value
  auto flush_batch = [&](int aligned) -> Status {
    if (batch[aligned].empty()) return {};
    std::vector<std::string_view> views(batch[aligned].begin(), batch[aligned].end());
    BlobOptions options;
    options.page_aligned = aligned == 1;
    auto ids = put_blobs(views, options);
    batch[aligned].clear();
    batch_bytes[aligned] = 0;
    return ids.status();
  };

  uint64_t pos = 16, count = 0;
  bool ended = false;
  while (!ended) {
    if (pos == size) return bad(pos, "the file is truncated (no end marker)");
    if (size - pos < 12 || !read_at(pos, 12, &buf)) return bad(pos, "truncated entry header");
    ByteReader er(buf);
    uint32_t type = er.u32();
    uint64_t length = er.u64();
    if (length > kMaxEntryBytes || length > size - pos - 12 || size - pos - 12 - length < 8) {
      return bad(pos, "entry claims " + std::to_string(length) +
                          " bytes, more than the file holds or than allowed");
    }
    std::string payload;
    if (!read_at(pos + 12, length + 8, &payload)) return bad(pos, "read failed");
    ByteReader sr(std::string_view(payload).substr(length));
    uint64_t sum = sr.u64();
    payload.resize(length);
    if (sum != entry_checksum(type, payload)) return bad(pos, "entry checksum mismatch");
    switch (type) {
      case kBlob:
      case kAlignedBlob: {
        if (length < 16) return bad(pos, "blob entry too short");
        BlobId id = key_hash(std::string_view(payload).substr(0, 16));
        if (hash_bytes(std::string_view(payload).substr(16)) != id) {
          return bad(pos, "blob " + id.hex() + " does not match its hash");
        }
        int aligned = type == kAlignedBlob ? 1 : 0;
        batch_bytes[aligned] += length - 16;
        batch[aligned].push_back(payload.substr(16));
        ++report.blobs;
        if (batch_bytes[aligned] >= kImportBatchBytes) {
          Status s = flush_batch(aligned);
          if (!s.ok()) return Status::error(file + ": import failed: " + s.message());
        }
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
        ByteReader cr(payload);
        uint64_t expected = cr.u64();
        if (!cr.done() || expected != count) {
          return bad(pos, "end marker counts " + std::to_string(expected) + " entries, found " +
                              std::to_string(count));
        }
        if (pos + 12 + length + 8 != size) return bad(pos, "bytes after the end marker");
        ended = true;
        break;
      }
      default:
        return bad(pos, "unknown entry type " + std::to_string(type));
    }
    if (type != kEnd) ++count;
    pos += 12 + length + 8;
  }
  for (int aligned = 0; aligned < 2; ++aligned) {
    Status s = flush_batch(aligned);
    if (!s.ok()) return Status::error(file + ": import failed: " + s.message());
  }
  Status s = index_->write([&](Txn& t) {
    for (const auto& [table, kv] : records) {
      Status p = t.put(table, kv.first, seal(table_name(table), kv.first, kv.second));
      if (!p.ok()) return p;
    }
    return Status();
  });
  if (!s.ok()) return Status::error(file + ": import failed: " + after_failure(s).message());
  return report;
}

}  // namespace lexpack::cache
