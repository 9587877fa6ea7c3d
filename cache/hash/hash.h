// The 128-bit content hash (XXH3-128) used for blob ids and action keys.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lexpack::cache {

struct Hash128 {
  uint64_t lo = 0;
  uint64_t hi = 0;
  bool is_zero() const { return lo == 0 && hi == 0; }
  bool operator==(const Hash128&) const = default;
  std::string hex() const;  // 32 lower-case hex digits, hi first
  static bool from_hex(std::string_view hex, Hash128* out);
};

Hash128 hash_bytes(std::string_view bytes);

// XXH3-64 of `bytes`: a hash table's hash of paths and keys (several times
// faster than std::hash on strings of tens of bytes).
uint64_t hash64(std::string_view bytes);
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return size_t(hash64(s)); }
};

// Incremental XXH3-128 for keys built from many parts.
class Hasher {
 public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  void update(std::string_view bytes);
  // A length-prefixed field, so that ("ab","c") and ("a","bc") differ.
  void field(std::string_view bytes);
  void field(uint64_t value);
  // field(d.lo), field(d.hi) of each in turn, in one update (thousands of
  // digests cost one call, not two each).
  void fields(const std::vector<Hash128>& digests);
  Hash128 digest() const;

 private:
  void* state_;
};

}  // namespace lexpack::cache
