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

// High bit set in every zero byte of v, and possibly in bytes above a zero
// byte (borrow); the lowest flagged byte is always a true zero.
inline uint64_t zero_bytes_lowest(uint64_t v) {
  return (v - kOnes) & ~v & kHighs;
}

// High bit set in exactly the zero bytes of v.
inline uint64_t zero_bytes_exact(uint64_t v) {
  return ~(((v & kLows) + kLows) | v | kLows);
}

inline int first_byte(uint64_t mask) {
  return std::countr_zero(mask) >> 3;
}

const char* find_any4(const char* begin, const char* end, const char needles[4]) {
  const uint64_t n0 = broadcast(needles[0]), n1 = broadcast(needles[1]);
  const uint64_t n2 = broadcast(needles[2]), n3 = broadcast(needles[3]);
  const char* p = begin;
  while (end - p >= 8) {
    const uint64_t v = load64(p);
    const uint64_t m = zero_bytes_lowest(v ^ n0) | zero_bytes_lowest(v ^ n1) |
                       zero_bytes_lowest(v ^ n2) | zero_bytes_lowest(v ^ n3);
    if (m) return p + first_byte(m);
    p += 8;
  }
  for (; p < end; ++p) {
    if (*p == needles[0] || *p == needles[1] || *p == needles[2] || *p == needles[3]) return p;
  }
  return end;
}

inline bool quad_at(const char* p, const uint32_t* quads, int count) {
  const uint32_t v = load32(p);
  for (int i = 0; i < count; ++i) {
    if (v == quads[i]) return true;
  }
  return false;
}

const char* find_quad(const char* begin, const char* end, const uint32_t* quads, int count) {
  if (count <= 0 || end - begin < 4) return end;
  uint64_t first[kMaxQuads], last[kMaxQuads];
  for (int i = 0; i < count; ++i) {
    first[i] = kOnes * (quads[i] & 0xff);
    last[i] = kOnes * (quads[i] >> 24);
  }
  const char* stop = end - 3;  // one past the last position a quad may start at
  const char* p = begin;
  // Positions p..p+7 need bytes up to p+10: the word at p and the word at p+3.
  while (end - p >= 11) {
    const uint64_t a = load64(p), d = load64(p + 3);
    uint64_t m = 0;
    for (int i = 0; i < count; ++i) m |= zero_bytes_lowest((a ^ first[i]) | (d ^ last[i]));
    // The lowest flag is exact; higher ones may be borrow noise, so verify each.
    while (m) {
      const char* c = p + first_byte(m);
      if (quad_at(c, quads, count)) return c;
      m &= m - 1;
    }
    p += 8;
  }
  for (; p < stop; ++p) {
    if (quad_at(p, quads, count)) return p;
  }
  return end;
}

size_t count_lines(const char* begin, const char* end) {
  const uint64_t lf = broadcast('\n'), cr = broadcast('\r');
  size_t lines = 0;
  const char* p = begin;
  // Each '\n' counts; each '\r' counts unless the next byte is '\n'. The word at
  // p + 1 gives "next byte" for all eight positions, so the loop needs 9 bytes.
  while (end - p >= 9) {
    const uint64_t v = load64(p), next = load64(p + 1);
    const uint64_t lfs = zero_bytes_exact(v ^ lf);
    const uint64_t lone_crs = zero_bytes_exact(v ^ cr) & ~zero_bytes_exact(next ^ lf);
    lines += std::popcount(lfs) + std::popcount(lone_crs);
    p += 8;
  }
  for (; p < end; ++p) {
    if (*p == '\n' || (*p == '\r' && (p + 1 == end || p[1] != '\n'))) ++lines;
  }
  return lines;
}

}  // namespace

extern const Kernel kScalarKernel = {"scalar", find_any4, find_quad, count_lines};

}  // namespace lexpack::lexer
