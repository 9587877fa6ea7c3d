// The ARM64 kernel: NEON compares 16 bytes at a time; the "shift right and
// narrow by 4" trick turns a compare result into a 64-bit mask with four bits
// per byte, so the first match is a count of trailing zeros. Tails use an
// overlapping last load or a zero-padded stack copy: never a byte outside
// [begin, end) is read.
#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "lexer/kernels_internal.h"

namespace lexpack::lexer {
namespace {

constexpr int kWidth = 16;

inline uint8x16_t load(const char* p) {
  return vld1q_u8(reinterpret_cast<const uint8_t*>(p));
}
inline uint8x16_t splat(uint32_t byte) {
  return vdupq_n_u8(uint8_t(byte & 0xff));
}

// Four bits per byte lane: 0xf where the lane is set, 0 elsewhere.
inline uint64_t nibbles(uint8x16_t cmp) {
  return vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(vreinterpretq_u16_u8(cmp), 4)), 0);
}
inline int first_lane(uint64_t nib) {
  return __builtin_ctzll(nib) >> 2;
}
inline uint64_t low_lanes(size_t n) {
  return n >= 16 ? ~0ull : (1ull << (4 * n)) - 1;
}

struct Any4 {
  uint8x16_t n0, n1, n2, n3;
  explicit Any4(const char needles[4])
      : n0(vdupq_n_u8(uint8_t(needles[0]))),
        n1(vdupq_n_u8(uint8_t(needles[1]))),
        n2(vdupq_n_u8(uint8_t(needles[2]))),
        n3(vdupq_n_u8(uint8_t(needles[3]))) {}
  uint8x16_t hits(const char* p) const {
    const uint8x16_t v = load(p);
    return vorrq_u8(vorrq_u8(vceqq_u8(v, n0), vceqq_u8(v, n1)),
                    vorrq_u8(vceqq_u8(v, n2), vceqq_u8(v, n3)));
  }
};

const char* find_any4(const char* begin, const char* end, const char needles[4]) {
  const Any4 any(needles);
  const size_t len = size_t(end - begin);
  if (len < size_t(kWidth)) {
    alignas(16) char buf[kWidth] = {};
    if (len) std::memcpy(buf, begin, len);
    const uint64_t m = nibbles(any.hits(buf)) & low_lanes(len);
    return m ? begin + first_lane(m) : end;
  }
  const char* p = begin;
  while (end - p >= 2 * kWidth) {
    const uint8x16_t h0 = any.hits(p), h1 = any.hits(p + kWidth);
    if (nibbles(vorrq_u8(h0, h1))) {
      if (const uint64_t m = nibbles(h0)) return p + first_lane(m);
      return p + kWidth + first_lane(nibbles(h1));
    }
    p += 2 * kWidth;
  }
  if (end - p >= kWidth) {
    if (const uint64_t m = nibbles(any.hits(p))) return p + first_lane(m);
    p += kWidth;
  }
  if (p < end) {
    // Overlaps bytes already searched, so its first match is at or after p.
    if (const uint64_t m = nibbles(any.hits(end - kWidth))) return end - kWidth + first_lane(m);
  }
  return end;
}

// The vector operations the quad filter is written with.
struct Ops {
  using Vec = uint8x16_t;
  static Vec load(const char* p) { return lexer::load(p); }
  static Vec splat(uint8_t byte) { return lexer::splat(byte); }
  static Vec bit_or(Vec a, Vec b) { return vorrq_u8(a, b); }
  static Vec bit_and(Vec a, Vec b) { return vandq_u8(a, b); }
  static Vec eq(Vec a, Vec b) { return vceqq_u8(a, b); }
};

template <int N>
struct Quads {
  QuadFilter<Ops, N> filter;
  const QuadSearch& search;
  explicit Quads(const QuadSearch& s) : filter(s), search(s) {}
  // The block width and tail mask find_quad_n (kernels_internal.h) asks for.
  static constexpr int kWidth = lexer::kWidth;
  static uint64_t low_lanes(size_t n) { return lexer::low_lanes(n); }
  // Positions p..p+15 that pass a test, one bit per lane (bit 4*i+3);
  // reads p..p+18.
  uint64_t candidates(const char* p) const {
    return nibbles(filter.passes(p)) & 0x8888888888888888ull;
  }
  // First candidate whose four bytes equal a quad, as an index; -1 if none.
  int verify(const char* p, uint64_t m) const {
    for (; m; m &= m - 1) {
      const int i = first_lane(m);
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
inline uint8x16_t line_ends(const char* p, uint8x16_t acc) {
  const uint8x16_t lf = vdupq_n_u8('\n'), cr = vdupq_n_u8('\r');
  const uint8x16_t v = load(p), next = load(p + 1);
  const uint8x16_t lfs = vceqq_u8(v, lf);
  const uint8x16_t lone_crs = vbicq_u8(vceqq_u8(v, cr), vceqq_u8(next, lf));
  // Compare results are 0 or 0xff (-1) per byte: subtracting counts up.
  return vsubq_u8(vsubq_u8(acc, lfs), lone_crs);
}

size_t count_lines(const char* begin, const char* end) {
  size_t lines = 0;
  const char* p = begin;
  while (end - p > kWidth) {
    // A byte is a line end at most once, so a lane gains at most 1 per step.
    uint8x16_t acc = vdupq_n_u8(0);
    for (int steps = 0; steps < 255 && end - p > kWidth; ++steps, p += kWidth) {
      acc = line_ends(p, acc);
    }
    lines += vaddlvq_u8(acc);
  }
  if (p < end) {
    // Zero padding is neither '\r' nor '\n', so a final '\r' counts as it should.
    alignas(16) char buf[2 * kWidth] = {};
    std::memcpy(buf, p, size_t(end - p));
    lines += vaddlvq_u8(line_ends(buf, vdupq_n_u8(0)));
  }
  return lines;
}

}  // namespace

extern const Kernel kNeonKernel = {"neon", find_any4, find_quad, count_lines};

}  // namespace lexpack::lexer
