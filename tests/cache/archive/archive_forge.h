// Builds archive bytes the way a forger who knows the format would, for
// tests of what import accepts and refuses.
#pragma once

#include <cstdint>
#include <string>

#include "cache/hash/hash.h"

namespace lexpack::cache::testing {

inline void put_le(std::string* out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

inline std::string archive_header() {
  return std::string("LXPKARC\n\x01\0\0\0\0\0\0\0", 16);
}

// One entry {type, length, payload, checksum}.
inline void archive_entry(std::string* out, uint32_t type, const std::string& payload) {
  put_le(out, type, 4);
  put_le(out, payload.size(), 8);
  out->append(payload);
  Hasher h;
  h.field(static_cast<uint64_t>(type));
  h.field(payload);
  put_le(out, h.digest().lo, 8);
}

inline std::string blob_payload(const std::string& bytes) {
  Hash128 id = hash_bytes(bytes);
  std::string key;
  put_le(&key, id.lo, 8);
  put_le(&key, id.hi, 8);
  return key + bytes;
}

inline std::string end_payload(uint64_t count) {
  std::string s;
  put_le(&s, count, 8);
  return s;
}

}  // namespace lexpack::cache::testing
