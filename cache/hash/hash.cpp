// XXH3-128 behind the Hash128 type, so that no other file includes xxhash.h
// and the hash can be swapped in one place.
#include "cache/hash/hash.h"

#include <xxhash.h>

// glibc 2.33 on; its header is C that g++ takes and clang++ does not (_Bool).
#if defined(LEXPACK_HAVE_AVX2_HASH) && !defined(__clang__) && __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#endif

namespace lexpack::cache {

namespace {

Hash128 from_xxh(XXH128_hash_t h) {
  return Hash128{h.low64, h.high64};
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string Hash128::hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(32, '0');
  for (int i = 0; i < 16; ++i) {
    out[15 - i] = kDigits[(hi >> (4 * i)) & 0xf];
    out[31 - i] = kDigits[(lo >> (4 * i)) & 0xf];
  }
  return out;
}

bool Hash128::from_hex(std::string_view hex, Hash128* out) {
  if (hex.size() != 32) return false;
  uint64_t parts[2] = {0, 0};
  for (size_t i = 0; i < 32; ++i) {
    int v = hex_value(hex[i]);
    if (v < 0) return false;
    parts[i / 16] = (parts[i / 16] << 4) | static_cast<uint64_t>(v);
  }
  out->hi = parts[0];
  out->lo = parts[1];
  return true;
}

#if defined(LEXPACK_HAVE_AVX2_HASH)
void xxh3_128_avx2(const void* data, size_t size, uint64_t* lo, uint64_t* hi);

namespace {
// glibc's answer, found as the process started: libgcc's
// __builtin_cpu_supports would add a constructor of its own asking the CPU
// again (each cpuid costs microseconds on a virtual machine).
#if defined(CPU_FEATURE_ACTIVE)
const bool kUseAvx2 = CPU_FEATURE_ACTIVE(AVX2);
#else
const bool kUseAvx2 = __builtin_cpu_supports("avx2");
#endif
}  // namespace
#endif

uint64_t hash64(std::string_view bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

Hash128 hash_bytes(std::string_view bytes) {
#if defined(LEXPACK_HAVE_AVX2_HASH)
  // Every blob read is hashed: the wider kernel matters on big blobs.
  if (kUseAvx2 && bytes.size() >= 256) {
    Hash128 h;
    xxh3_128_avx2(bytes.data(), bytes.size(), &h.lo, &h.hi);
    return h;
  }
#endif
  return from_xxh(XXH3_128bits(bytes.data(), bytes.size()));
}

Hasher::Hasher() : state_(XXH3_createState()) {
  XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_));
}

Hasher::~Hasher() {
  XXH3_freeState(static_cast<XXH3_state_t*>(state_));
}

void Hasher::update(std::string_view bytes) {
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), bytes.data(), bytes.size());
}

void Hasher::field(std::string_view bytes) {
  field(static_cast<uint64_t>(bytes.size()));
  update(bytes);
}

namespace {

// `value` as field() hashes it: eight bytes, least significant first.
void put_le(uint64_t value, char* at) {
  for (int i = 0; i < 8; ++i)
    at[i] = static_cast<char>(static_cast<unsigned char>(value >> (8 * i)));
}

}  // namespace

void Hasher::field(uint64_t value) {
  char le[8];
  put_le(value, le);
  update(std::string_view(le, 8));
}

void Hasher::fields(const std::vector<Hash128>& digests) {
  std::string bytes(digests.size() * 16, '\0');
  for (size_t i = 0; i < digests.size(); ++i) {
    put_le(digests[i].lo, &bytes[16 * i]);
    put_le(digests[i].hi, &bytes[16 * i + 8]);
  }
  update(bytes);
}

Hash128 Hasher::digest() const {
  return from_xxh(XXH3_128bits_digest(static_cast<const XXH3_state_t*>(state_)));
}

}  // namespace lexpack::cache
