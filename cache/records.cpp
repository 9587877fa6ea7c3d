// Encoding and decoding of index records; see records.h. Decoders reject
// truncated, trailing or implausible bytes instead of guessing.
#include "cache/records.h"

#include <cstring>

namespace lexpack::cache {

namespace {

// Records up to this size are framed into a stack buffer and hashed in one
// shot; every blob read checks one, and a streaming state costs an allocation.
constexpr size_t kOneShotLimit = 512;

void put_le64(char* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(v >> (8 * i));
}

// XXH3-128 (low half) over the three fields, each preceded by its length as
// Hasher::field frames it; the one-shot and streaming forms give equal sums.
uint64_t checksum(std::string_view table, std::string_view key, std::string_view value) {
  const size_t total = 24 + table.size() + key.size() + value.size();
  if (total <= kOneShotLimit) {
    char buffer[kOneShotLimit];
    char* at = buffer;
    for (std::string_view part : {table, key, value}) {
      put_le64(at, part.size());
      if (!part.empty()) std::memcpy(at + 8, part.data(), part.size());
      at += 8 + part.size();
    }
    return hash_bytes(std::string_view(buffer, total)).lo;
  }
  Hasher h;
  h.field(table);
  h.field(key);
  h.field(value);
  return h.digest().lo;
}

}  // namespace

std::string seal(std::string_view table, std::string_view key, std::string value) {
  uint64_t sum = checksum(table, key, value);
  for (size_t i = 0; i < kSealBytes; ++i) value.push_back(static_cast<char>(sum >> (8 * i)));
  return value;
}

std::optional<std::string_view> unseal(std::string_view table, std::string_view key,
                                       std::string_view sealed) {
  if (sealed.size() < 8) return std::nullopt;
  std::string_view value = sealed.substr(0, sealed.size() - 8);
  FixedReader r(sealed.substr(sealed.size() - 8));
  if (r.u64() != checksum(table, key, value)) return std::nullopt;
  return value;
}

std::string encode(const BlobLocation& b) {
  FixedWriter w;
  w.u32(b.pack);
  w.u32(b.flags);
  w.u64(b.offset);
  w.u64(b.size);
  w.u64(b.last_use);
  return std::move(w.bytes());
}

std::optional<BlobLocation> decode_blob_location(std::string_view bytes) {
  FixedReader r(bytes);
  BlobLocation b;
  b.pack = r.u32();
  b.flags = r.u32();
  b.offset = r.u64();
  b.size = r.u64();
  b.last_use = r.u64();
  if (!r.done() || b.offset > (1ull << 48) || b.size > (1ull << 40)) return std::nullopt;
  return b;
}

std::string encode(const PackRecord& p) {
  FixedWriter w;
  w.u32(p.state);
  w.u64(p.created);
  w.u64(p.last_use);
  w.u64(p.blob_bytes);
  return std::move(w.bytes());
}

std::optional<PackRecord> decode_pack_record(std::string_view bytes) {
  FixedReader r(bytes);
  PackRecord p;
  p.state = r.u32();
  p.created = r.u64();
  p.last_use = r.u64();
  p.blob_bytes = r.u64();
  if (!r.done() || p.state > PackRecord::kEvicting) return std::nullopt;
  return p;
}

std::string encode(std::string_view path, const FileRecord& f) {
  FixedWriter w;
  w.str(path);
  w.u64(f.stat.dev);
  w.u64(f.stat.ino);
  w.u64(f.stat.size);
  w.u64(static_cast<uint64_t>(f.stat.mtime_ns));
  w.u64(static_cast<uint64_t>(f.stat.ctime_ns));
  w.hash(f.content);
  w.hash(f.scan_result);
  return std::move(w.bytes());
}

std::optional<FileRecord> decode_file_record(std::string_view bytes, std::string* path) {
  FixedReader r(bytes);
  FileRecord f;
  std::string_view p = r.str();
  f.stat.dev = r.u64();
  f.stat.ino = r.u64();
  f.stat.size = r.u64();
  f.stat.mtime_ns = static_cast<int64_t>(r.u64());
  f.stat.ctime_ns = static_cast<int64_t>(r.u64());
  f.content = r.hash();
  f.scan_result = r.hash();
  if (!r.done()) return std::nullopt;
  if (path) *path = std::string(p);
  return f;
}

std::string encode(const ActionRecord& a) {
  FixedWriter w;
  w.u64(a.outputs.size());
  for (const auto& o : a.outputs) {
    w.str(o.role);
    w.hash(o.blob);
  }
  w.u32(static_cast<uint32_t>(a.exit_code));
  w.hash(a.stdout_blob);
  w.hash(a.stderr_blob);
  w.str(a.payload);
  w.u64(a.compile_time_us);
  return std::move(w.bytes());
}

std::optional<ActionRecord> decode_action_record(std::string_view bytes) {
  FixedReader r(bytes);
  ActionRecord a;
  uint64_t n = r.u64();
  // Each output takes at least 24 bytes, so a huge count is caught before allocating.
  if (!r.ok() || n > r.remaining() / 24) return std::nullopt;
  for (uint64_t i = 0; i < n; ++i) {
    ActionRecord::Output o;
    o.role = std::string(r.str());
    o.blob = r.hash();
    a.outputs.push_back(std::move(o));
  }
  a.exit_code = static_cast<int32_t>(r.u32());
  a.stdout_blob = r.hash();
  a.stderr_blob = r.hash();
  a.payload = std::string(r.str());
  a.compile_time_us = r.u64();
  if (!r.done()) return std::nullopt;
  return a;
}

std::string encode_memo(std::string_view table, std::string_view key, std::string_view value) {
  FixedWriter w;
  // Sized once, with room for the seal: a memo can be tens of kB, and each
  // regrowth is a copy into fresh pages.
  w.reserve(3 * 8 + table.size() + key.size() + value.size() + kSealBytes);
  w.str(table);
  w.str(key);
  w.str(value);
  return std::move(w.bytes());
}

bool decode_memo(std::string_view bytes, std::string_view* table, std::string_view* key,
                 std::string_view* value) {
  FixedReader r(bytes);
  *table = r.str();
  *key = r.str();
  *value = r.str();
  return r.done();
}

std::string hash_key(const Hash128& h) {
  FixedWriter w;
  w.hash(h);
  return std::move(w.bytes());
}

HashKeyBytes::HashKeyBytes(const Hash128& h) {
  put_le64(bytes, h.lo);
  put_le64(bytes + 8, h.hi);
}

Hash128 key_hash(std::string_view key16) {
  FixedReader r(key16);
  return r.hash();
}

std::string file_key(std::string_view path) {
  Hasher h;
  h.field("file");
  h.field(path);
  return hash_key(h.digest());
}

std::string memo_key(std::string_view table, std::string_view key) {
  Hasher h;
  h.field("memo");
  h.field(table);
  h.field(key);
  return hash_key(h.digest());
}

std::string pack_key(uint32_t pack) {
  std::string k(4, '\0');
  for (int i = 0; i < 4; ++i) k[i] = static_cast<char>(pack >> (8 * (3 - i)));
  return k;
}

uint32_t key_pack(std::string_view key4) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4 && i < key4.size(); ++i) v = (v << 8) | static_cast<uint8_t>(key4[i]);
  return v;
}

}  // namespace lexpack::cache
