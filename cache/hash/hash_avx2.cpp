// XXH3-128 built for AVX2, chosen at run time by hash.cpp on CPUs that have
// it. XXH3 gives the same result for every vector width. Only static
// (inlined) xxhash functions live here, so no AVX2 code leaks into shared
// inline definitions used elsewhere.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstddef>
#include <cstdint>

namespace lexpack::cache {

void xxh3_128_avx2(const void* data, size_t size, uint64_t* lo, uint64_t* hi) {
  XXH128_hash_t h = XXH3_128bits(data, size);
  *lo = h.low64;
  *hi = h.high64;
}

}  // namespace lexpack::cache
