// The reference kernel: portable C++ without intrinsics, but not a byte loop.
// It reads eight bytes per step and finds matches with the classic SWAR
// "has a zero byte" trick, so it stays fast on machines without SIMD.
#include <bit>
#include <cstdint>
#include <cstring>

#include "lexer/kernels_internal.h"

namespace lexpack::lexer {
namespace {

constexpr uint64_t kOnes = 0x0101010101010101ull;
constexpr uint64_t kHighs = 0x8080808080808080ull;
constexpr uint64_t kLows = 0x7f7f7f7f7f7f7f7full;

// Eight bytes at p with p[0] in the low byte, whatever the host byte order.
inline uint64_t load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

inline uint32_t load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  return v;
}

inline uint64_t broadcast(char c) {
  return kOnes * uint8_t(c);
}

// The "has a zero byte" trick, (v - 0x01..) & ~v & 0x80.., used inline below:
// it flags every zero byte of v, and possibly bytes above a zero byte (borrow),
// so the lowest flagged byte is always a true zero.

// High bit set in exactly the zero bytes of v.
inline uint64_t zero_bytes_exact(uint64_t v) {
  return ~(((v & kLows) + kLows) | v | kLows);
}

inline int first_byte(uint64_t mask) {
  return std::countr_zero(mask) >> 3;
}

// Flags bytes of v equal to one of the four broadcast needles (lowest exact).
inline uint64_t any4_mask(uint64_t v, const uint64_t n[4]) {
  const uint64_t x0 = v ^ n[0], x1 = v ^ n[1], x2 = v ^ n[2], x3 = v ^ n[3];
  return (((x0 - kOnes) & ~x0) | ((x1 - kOnes) & ~x1) | ((x2 - kOnes) & ~x2) |
          ((x3 - kOnes) & ~x3)) &
         kHighs;
}

// Two needles whose bytes differ in at most one bit are found with a single
// compare: that bit is set in every byte, then bytes equal to the pair's OR
// are the matches. The scanner's code bytes pair up ('"' '#', '\'' '/'), and
// so do repeated needles, so most searches cost two compares, not four.
struct NeedlePairs {
  uint64_t bit[2];
  uint64_t value[2];
};

inline bool one_bit_apart(uint8_t a, uint8_t b) {
  const uint8_t x = a ^ b;
  return (x & (x - 1)) == 0;
}

bool pair_up(const char needles[4], NeedlePairs* out) {
  static constexpr int kPairings[3][4] = {{0, 1, 2, 3}, {0, 2, 1, 3}, {0, 3, 1, 2}};
  for (const auto& p : kPairings) {
    const uint8_t a = needles[p[0]], b = needles[p[1]], c = needles[p[2]], d = needles[p[3]];
    if (one_bit_apart(a, b) && one_bit_apart(c, d)) {
      *out = {{broadcast(char(a ^ b)), broadcast(char(c ^ d))},
              {broadcast(char(a | b)), broadcast(char(c | d))}};
      return true;
    }
  }
  return false;
}

// Flags bytes of v in one of the two pairs (lowest exact).
inline uint64_t pairs_mask(uint64_t v, const NeedlePairs& n) {
  const uint64_t x0 = (v | n.bit[0]) ^ n.value[0], x1 = (v | n.bit[1]) ^ n.value[1];
  return (((x0 - kOnes) & ~x0) | ((x1 - kOnes) & ~x1)) & kHighs;
}

// The first match among whole words from begin, else where fewer than eight
// bytes are left.
const char* find_pairs(const char* begin, const char* end, const NeedlePairs& n) {
  const char* p = begin;
  while (end - p >= 16) {
    const uint64_t m0 = pairs_mask(load64(p), n), m1 = pairs_mask(load64(p + 8), n);
    if (m0 | m1) return m0 ? p + first_byte(m0) : p + 8 + first_byte(m1);
    p += 16;
  }
  if (end - p >= 8) {
    if (const uint64_t m = pairs_mask(load64(p), n)) return p + first_byte(m);
    p += 8;
  }
  return p;
}

const char* find_any4(const char* begin, const char* end, const char needles[4]) {
  const char* p = begin;
  NeedlePairs pairs;
  if (pair_up(needles, &pairs)) {
    // The first match, or the last few bytes, which the loop below checks.
    for (p = find_pairs(begin, end, pairs); p < end; ++p) {
      if (*p == needles[0] || *p == needles[1] || *p == needles[2] || *p == needles[3]) return p;
    }
    return end;
  }
  const uint64_t n[4] = {broadcast(needles[0]), broadcast(needles[1]), broadcast(needles[2]),
                         broadcast(needles[3])};
  // Two independent words per step keep more of the CPU busy.
  while (end - p >= 16) {
    const uint64_t m0 = any4_mask(load64(p), n), m1 = any4_mask(load64(p + 8), n);
    if (m0 | m1) return m0 ? p + first_byte(m0) : p + 8 + first_byte(m1);
    p += 16;
  }
  if (end - p >= 8) {
    if (const uint64_t m = any4_mask(load64(p), n)) return p + first_byte(m);
    p += 8;
  }
  for (; p < end; ++p) {
    if (*p == needles[0] || *p == needles[1] || *p == needles[2] || *p == needles[3]) return p;
  }
  return end;
}

inline bool quad_at(const char* p, const QuadSearch& s) {
  const uint32_t v = load32(p);
  bool hit = false;
  for (int i = 0; i < s.quad_count; ++i) hit |= v == s.quads[i];
  return hit;
}

// The test count is a template parameter so the per-test loops unroll.
template <int N>
const char* find_quad_n(const char* begin, const char* end, const QuadSearch& s) {
  uint64_t ones[N][2], value[N][2];
  int at[N][2];
  for (int t = 0; t < N; ++t) {
    for (int k = 0; k < 2; ++k) {
      ones[t][k] = broadcast(char(s.tests[t].ones[k]));
      value[t][k] = broadcast(char(s.tests[t].value[k]));
      at[t][k] = s.tests[t].at[k];
    }
  }
  const char* stop = end - 3;  // one past the last position a quad may start at
  const char* p = begin;
  // Positions p..p+7 need bytes up to p+10: words at p + at, at <= 3.
  while (end - p >= 11) {
    uint64_t m = 0;
    for (int t = 0; t < N; ++t) {
      // Zero where both tested bytes fit.
      const uint64_t x = ((load64(p + at[t][0]) | ones[t][0]) ^ value[t][0]) |
                         ((load64(p + at[t][1]) | ones[t][1]) ^ value[t][1]);
      m |= (x - kOnes) & ~x;
    }
    m &= kHighs;
    // The lowest flag is exact; higher ones may be borrow noise, so verify each.
    while (m) {
      const char* c = p + first_byte(m);
      if (quad_at(c, s)) return c;
      m &= m - 1;
    }
    p += 8;
  }
  for (; p < stop; ++p) {
    if (quad_at(p, s)) return p;
  }
  return end;
}

const char* find_quad(const char* begin, const char* end, const QuadSearch& search) {
  return find_quad_by_tests<find_quad_n<1>, find_quad_n<2>>(begin, end, search);
}

// Sums the eight byte lanes of v (each at most 255).
inline size_t lane_sum(uint64_t v) {
  const uint64_t pairs = (v & 0x00ff00ff00ff00ffull) + ((v >> 8) & 0x00ff00ff00ff00ffull);
  return size_t((pairs * 0x0001000100010001ull) >> 48);
}

size_t count_lines(const char* begin, const char* end) {
  const uint64_t lf = broadcast('\n'), cr = broadcast('\r');
  size_t lines = 0;
  const char* p = begin;
  // Each '\n' counts; each '\r' counts unless the next byte is '\n'. The word at
  // p + 1 gives "next byte" for all eight positions, so the loop needs 9 bytes.
  // Counts gather in byte lanes (a byte is at most one line end, so +1 per step)
  // and are summed before a lane could pass 255.
  while (end - p >= 9) {
    uint64_t acc = 0;
    for (int steps = 0; steps < 255 && end - p >= 9; ++steps, p += 8) {
      const uint64_t v = load64(p);
      acc += zero_bytes_exact(v ^ lf) >> 7;
      const uint64_t x = v ^ cr;
      if ((x - kOnes) & ~x & kHighs) {  // rare outside CRLF files
        const uint64_t lone_crs = zero_bytes_exact(x) & ~zero_bytes_exact(load64(p + 1) ^ lf);
        acc += lone_crs >> 7;
      }
    }
    lines += lane_sum(acc);
  }
  for (; p < end; ++p) {
    if (*p == '\n' || (*p == '\r' && (p + 1 == end || p[1] != '\n'))) ++lines;
  }
  return lines;
}

}  // namespace

extern const Kernel kScalarKernel = {"scalar", find_any4, find_quad, count_lines};

}  // namespace lexpack::lexer
