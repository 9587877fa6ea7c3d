// How index records are laid out as bytes (internal to cache/ and
// cache/archive/). Every value ends with a checksum over its table, key and
// bytes, so a flipped bit in the index reads as a damaged record, never as a
// different answer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cache/store.h"

namespace lexpack::cache {

// Appends little-endian fixed-width fields to a string: the layout of the
// index records on disk (base/byte_codec.h is the varint codec of the records
// stored above the cache; the two are different formats on purpose).
class FixedWriter {
 public:
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void hash(const Hash128& h) {
    u64(h.lo);
    u64(h.hi);
  }
  void str(std::string_view s) {
    u64(s.size());
    out_.append(s);
  }
  std::string& bytes() { return out_; }
  void reserve(size_t n) { out_.reserve(n); }

 private:
  void put(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  std::string out_;
};

// Reads what FixedWriter wrote; every read is bounds-checked and a failed read
// makes ok() false for good.
class FixedReader {
 public:
  explicit FixedReader(std::string_view in) : in_(in) {}
  uint32_t u32() { return static_cast<uint32_t>(get(4)); }
  uint64_t u64() { return get(8); }
  Hash128 hash() {
    Hash128 h;
    h.lo = u64();
    h.hi = u64();
    return h;
  }
  std::string_view str() {
    uint64_t n = u64();
    if (!ok_ || n > in_.size()) {
      ok_ = false;
      return {};
    }
    std::string_view s = in_.substr(0, n);
    in_.remove_prefix(n);
    return s;
  }
  bool ok() const { return ok_; }
  bool done() const { return ok_ && in_.empty(); }
  size_t remaining() const { return in_.size(); }

 private:
  uint64_t get(int n) {
    if (!ok_ || in_.size() < static_cast<size_t>(n)) {
      ok_ = false;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(in_[i])) << (8 * i);
    in_.remove_prefix(n);
    return v;
  }
  std::string_view in_;
  bool ok_ = true;
};

// Appends the checksum of (table, key, value) to value.
std::string seal(std::string_view table, std::string_view key, std::string value);
constexpr size_t kSealBytes = 8;  // what seal() appends
// The payload of a sealed value, or nullopt if the checksum does not match.
std::optional<std::string_view> unseal(std::string_view table, std::string_view key,
                                       std::string_view sealed);

inline constexpr uint32_t kBlobPageAligned = 1;

// blobs table: id -> where its bytes are.
struct BlobLocation {
  uint32_t pack = 0;
  uint32_t flags = 0;
  uint64_t offset = 0;  // of the blob's bytes in the pack
  uint64_t size = 0;
  uint64_t last_use = 0;  // unix seconds, updated coarsely
};

// packs table: pack number -> its state.
struct PackRecord {
  enum State : uint32_t { kLive = 0, kEvicting = 1 };
  uint32_t state = kLive;
  uint64_t created = 0;
  uint64_t last_use = 0;
  uint64_t blob_bytes = 0;  // bytes of blobs indexed in it (without padding)
};

std::string encode(const BlobLocation& b);
std::optional<BlobLocation> decode_blob_location(std::string_view bytes);
std::string encode(const PackRecord& p);
std::optional<PackRecord> decode_pack_record(std::string_view bytes);
std::string encode(std::string_view path, const FileRecord& f);
// The stored path is returned too, so a key collision cannot pass as a hit.
std::optional<FileRecord> decode_file_record(std::string_view bytes, std::string* path);
std::string encode(const ActionRecord& a);
std::optional<ActionRecord> decode_action_record(std::string_view bytes);
std::string encode_memo(std::string_view table, std::string_view key, std::string_view value);
bool decode_memo(std::string_view bytes, std::string_view* table, std::string_view* key,
                 std::string_view* value);

// 16-byte keys of the files and memo tables (their names can be long).
std::string file_key(std::string_view path);
std::string memo_key(std::string_view table, std::string_view key);
std::string hash_key(const Hash128& h);  // 16 bytes, lo then hi, little-endian
// The same 16 bytes on the stack, for lookups on the blob read path.
struct HashKeyBytes {
  explicit HashKeyBytes(const Hash128& h);
  std::string_view view() const { return std::string_view(bytes, sizeof bytes); }
  char bytes[16];
};
Hash128 key_hash(std::string_view key16);
std::string pack_key(uint32_t pack);  // big-endian, so packs sort by number
uint32_t key_pack(std::string_view key4);

}  // namespace lexpack::cache
