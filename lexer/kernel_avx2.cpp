// The fast x86-64 kernel: 32 bytes per compare with AVX2, tzcnt/popcnt from
// BMI. Built with -mavx2 -mbmi -mbmi2 -mpopcnt, so the dispatcher only hands it
// out when the CPU has all of those. Never reads a byte outside [begin, end).
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "lexer/kernels_internal.h"

namespace lexpack::lexer {
namespace {

constexpr int kWidth = 32;

inline __m256i load(const char* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
inline __m128i load16(const char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
inline __m256i splat(uint32_t byte) {
  return _mm256_set1_epi8(char(byte & 0xff));
}
inline uint32_t bits(__m256i v) {
  return uint32_t(_mm256_movemask_epi8(v));
}
inline uint32_t low_bits(size_t n) {
  return n >= 32 ? ~0u : (1u << n) - 1;
}

struct Any4 {
  __m256i n0, n1, n2, n3;
  explicit Any4(const char needles[4])
      : n0(_mm256_set1_epi8(needles[0])),
        n1(_mm256_set1_epi8(needles[1])),
        n2(_mm256_set1_epi8(needles[2])),
        n3(_mm256_set1_epi8(needles[3])) {}
  __m256i hits(__m256i v) const {
    return _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, n0), _mm256_cmpeq_epi8(v, n1)),
                           _mm256_or_si256(_mm256_cmpeq_epi8(v, n2), _mm256_cmpeq_epi8(v, n3)));
  }
  uint32_t mask(const char* p) const { return bits(hits(load(p))); }
  // The same search on 16 bytes, for inputs shorter than one block.
  uint32_t mask16(const char* p) const {
    const __m128i v = load16(p);
    const __m128i h = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm256_castsi256_si128(n0)),
                                                _mm_cmpeq_epi8(v, _mm256_castsi256_si128(n1))),
                                   _mm_or_si128(_mm_cmpeq_epi8(v, _mm256_castsi256_si128(n2)),
                                                _mm_cmpeq_epi8(v, _mm256_castsi256_si128(n3))));
    return uint32_t(_mm_movemask_epi8(h));
  }
};

const char* find_any4(const char* begin, const char* end, const char needles[4]) {
  const Any4 any(needles);
  const size_t len = size_t(end - begin);
  if (len < size_t(kWidth)) {
    if (len >= 16) {
      if (const uint32_t m = any.mask16(begin)) return begin + _tzcnt_u32(m);
      const uint32_t m = any.mask16(end - 16);
      return m ? end - 16 + _tzcnt_u32(m) : end;
    }
    alignas(16) char buf[16] = {};
    if (len) std::memcpy(buf, begin, len);
    const uint32_t m = any.mask16(buf) & low_bits(len);
    return m ? begin + _tzcnt_u32(m) : end;
  }
  const char* p = begin;
  while (end - p >= 2 * kWidth) {
    const uint64_t m = uint64_t(any.mask(p)) | uint64_t(any.mask(p + kWidth)) << kWidth;
    if (m) return p + _tzcnt_u64(m);
    p += 2 * kWidth;
  }
  if (end - p >= kWidth) {
    if (const uint32_t m = any.mask(p)) return p + _tzcnt_u32(m);
    p += kWidth;
  }
  if (p < end) {
    // Overlaps bytes already searched, so its first match is at or after p.
    const uint32_t m = any.mask(end - kWidth);
    if (m) return end - kWidth + _tzcnt_u32(m);
  }
  return end;
}

// The vector operations the quad filter is written with.
struct Ops {
  using Vec = __m256i;
  static Vec load(const char* p) { return lexer::load(p); }
  static Vec splat(uint8_t byte) { return lexer::splat(byte); }
  static Vec bit_or(Vec a, Vec b) { return _mm256_or_si256(a, b); }
  static Vec bit_and(Vec a, Vec b) { return _mm256_and_si256(a, b); }
  static Vec eq(Vec a, Vec b) { return _mm256_cmpeq_epi8(a, b); }
};

template <int N>
struct Quads {
  QuadFilter<Ops, N> filter;
  const QuadSearch& search;
  explicit Quads(const QuadSearch& s) : filter(s), search(s) {}
  // The block width and tail mask find_quad_n (kernels_internal.h) asks for.
  static constexpr int kWidth = lexer::kWidth;
  static uint32_t low_lanes(size_t n) { return low_bits(n); }
  // Positions p..p+31 that pass a test; reads p..p+34.
  uint32_t candidates(const char* p) const { return bits(filter.passes(p)); }
  // First candidate whose four bytes equal a quad, as an index; -1 if none.
  int verify(const char* p, uint32_t m) const {
    for (; m; m = _blsr_u32(m)) {
      const int i = int(_tzcnt_u32(m));
      if (is_quad(p + i, search)) return i;
    }
    return -1;
  }
};

const char* find_quad(const char* begin, const char* end, const QuadSearch& search) {
  return find_quad_by_tests<find_quad_n<Quads<1>>, find_quad_n<Quads<2>>>(begin, end, search);
}

// Adds, per byte lane, one for each '\n' and each '\r' whose next byte is not
// '\n'. Reads p..p+32.
inline __m256i line_ends(const char* p, __m256i acc) {
  const __m256i lf = _mm256_set1_epi8('\n'), cr = _mm256_set1_epi8('\r');
  const __m256i v = load(p), next = load(p + 1);
  const __m256i lfs = _mm256_cmpeq_epi8(v, lf);
  const __m256i lone_crs =
      _mm256_andnot_si256(_mm256_cmpeq_epi8(next, lf), _mm256_cmpeq_epi8(v, cr));
  // Compare results are 0 or -1 per byte: subtracting counts up.
  return _mm256_sub_epi8(_mm256_sub_epi8(acc, lfs), lone_crs);
}

inline size_t lane_sum(__m256i acc) {
  const __m256i s = _mm256_sad_epu8(acc, _mm256_setzero_si256());
  const __m128i t = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  return size_t(_mm_cvtsi128_si64(t)) + size_t(_mm_extract_epi64(t, 1));
}

size_t count_lines(const char* begin, const char* end) {
  size_t lines = 0;
  const char* p = begin;
  while (end - p > kWidth) {
    // A byte is a line end at most once, so a lane gains at most 1 per step.
    __m256i acc = _mm256_setzero_si256();
    for (int steps = 0; steps < 255 && end - p > kWidth; ++steps, p += kWidth) {
      acc = line_ends(p, acc);
    }
    lines += lane_sum(acc);
  }
  if (p < end) {
    // Zero padding is neither '\r' nor '\n', so a final '\r' counts as it should.
    alignas(32) char buf[2 * kWidth] = {};
    std::memcpy(buf, p, size_t(end - p));
    lines += lane_sum(line_ends(buf, _mm256_setzero_si256()));
  }
  return lines;
}

}  // namespace

extern const Kernel kAvx2Kernel = {"avx2", find_any4, find_quad, count_lines};

}  // namespace lexpack::lexer
