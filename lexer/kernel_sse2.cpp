// The x86-64 baseline kernel: SSE2 is in every x86-64 CPU, so this one needs
// no run-time check. 16 bytes per compare, movemask to find the first match.
// Tails use an overlapping last load or a zero-padded stack copy: never a
// byte outside [begin, end) is read.
#include <emmintrin.h>

#include <cstdint>
#include <cstring>

#include "lexer/kernels_internal.h"

namespace lexpack::lexer {
namespace {

constexpr int kWidth = 16;

inline __m128i load(const char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
inline __m128i splat(uint32_t byte) {
  return _mm_set1_epi8(char(byte & 0xff));
}
inline uint32_t bits(__m128i v) {
  return uint32_t(_mm_movemask_epi8(v));
}
inline uint32_t low_bits(size_t n) {
  return n >= 32 ? ~0u : (1u << n) - 1;
}

struct Any4 {
  __m128i n0, n1, n2, n3;
  explicit Any4(const char needles[4])
      : n0(_mm_set1_epi8(needles[0])),
        n1(_mm_set1_epi8(needles[1])),
        n2(_mm_set1_epi8(needles[2])),
        n3(_mm_set1_epi8(needles[3])) {}
  uint32_t mask(const char* p) const {
    const __m128i v = load(p);
    return bits(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, n0), _mm_cmpeq_epi8(v, n1)),
                             _mm_or_si128(_mm_cmpeq_epi8(v, n2), _mm_cmpeq_epi8(v, n3))));
  }
};

const char* find_any4(const char* begin, const char* end, const char needles[4]) {
  const Any4 any(needles);
  const size_t len = size_t(end - begin);
  if (len < size_t(kWidth)) {
    alignas(16) char buf[kWidth] = {};
    if (len) std::memcpy(buf, begin, len);
    const uint32_t m = any.mask(buf) & low_bits(len);
    return m ? begin + __builtin_ctz(m) : end;
  }
  const char* p = begin;
  while (end - p >= 2 * kWidth) {
    const uint32_t m = any.mask(p) | any.mask(p + kWidth) << kWidth;
    if (m) return p + __builtin_ctz(m);
    p += 2 * kWidth;
  }
  if (end - p >= kWidth) {
    const uint32_t m = any.mask(p);
    if (m) return p + __builtin_ctz(m);
    p += kWidth;
  }
  if (p < end) {
    // Overlaps bytes already searched, so its first match is at or after p.
    const uint32_t m = any.mask(end - kWidth);
    if (m) return end - kWidth + __builtin_ctz(m);
  }
  return end;
}

// The vector operations the quad filter is written with.
struct Ops {
  using Vec = __m128i;
  static Vec load(const char* p) { return lexer::load(p); }
  static Vec splat(uint8_t byte) { return lexer::splat(byte); }
  static Vec bit_or(Vec a, Vec b) { return _mm_or_si128(a, b); }
  static Vec bit_and(Vec a, Vec b) { return _mm_and_si128(a, b); }
  static Vec eq(Vec a, Vec b) { return _mm_cmpeq_epi8(a, b); }
};

template <int N>
struct Quads {
  QuadFilter<Ops, N> filter;
  const QuadSearch& search;
  explicit Quads(const QuadSearch& s) : filter(s), search(s) {}
  // The block width and tail mask find_quad_n (kernels_internal.h) asks for.
  static constexpr int kWidth = lexer::kWidth;
  static uint32_t low_lanes(size_t n) { return low_bits(n); }
  // Positions p..p+15 that pass a test; reads p..p+18.
  uint32_t candidates(const char* p) const { return bits(filter.passes(p)); }
  // First candidate whose four bytes equal a quad, as an index; -1 if none.
  int verify(const char* p, uint32_t m) const {
    for (; m; m &= m - 1) {
      const int i = __builtin_ctz(m);
      if (is_quad(p + i, search)) return i;
    }
    return -1;
  }
};

const char* find_quad(const char* begin, const char* end, const QuadSearch& search) {
  return find_quad_by_tests<find_quad_n<Quads<1>>, find_quad_n<Quads<2>>>(begin, end, search);
}

// Adds, per byte lane, one for each '\n' and each '\r' whose next byte is not
// '\n'. Reads p..p+16.
inline __m128i line_ends(const char* p, __m128i acc) {
  const __m128i lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
  const __m128i v = load(p), next = load(p + 1);
  const __m128i lfs = _mm_cmpeq_epi8(v, lf);
  const __m128i lone_crs = _mm_andnot_si128(_mm_cmpeq_epi8(next, lf), _mm_cmpeq_epi8(v, cr));
  // Compare results are 0 or -1 per byte: subtracting counts up.
  return _mm_sub_epi8(_mm_sub_epi8(acc, lfs), lone_crs);
}

inline size_t lane_sum(__m128i acc) {
  const __m128i s = _mm_sad_epu8(acc, _mm_setzero_si128());
  return size_t(_mm_cvtsi128_si64(s)) + size_t(_mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s)));
}

size_t count_lines(const char* begin, const char* end) {
  size_t lines = 0;
  const char* p = begin;
  while (end - p > kWidth) {
    // A byte is a line end at most once, so a lane gains at most 1 per step.
    __m128i acc = _mm_setzero_si128();
    for (int steps = 0; steps < 255 && end - p > kWidth; ++steps, p += kWidth) {
      acc = line_ends(p, acc);
    }
    lines += lane_sum(acc);
  }
  if (p < end) {
    // Zero padding is neither '\r' nor '\n', so a final '\r' counts as it should.
    alignas(16) char buf[2 * kWidth] = {};
    std::memcpy(buf, p, size_t(end - p));
    lines += lane_sum(line_ends(buf, _mm_setzero_si128()));
  }
  return lines;
}

}  // namespace

extern const Kernel kSse2Kernel = {"sse2", find_any4, find_quad, count_lines};

}  // namespace lexpack::lexer
