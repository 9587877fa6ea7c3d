// The SIMD seam of the lexer: the few byte-search primitives the scanner's
// state machine needs. Every kernel (scalar, SSE2, AVX2, NEON) implements the
// same functions with the same exact results; only their speed differs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lexpack::lexer {

// Up to kMaxQuads four-byte needles, each read as p[0] | p[1] << 8 | ... .
inline constexpr int kMaxQuads = 8;
inline constexpr int kMaxQuadTests = 2;

// A cheap filter on two bytes of a four-byte window at p: p passes when
// (p[at[0]] | ones[0]) == value[0] and (p[at[1]] | ones[1]) == value[1].
// Bits set in `ones` make a test accept several bytes at once: ones 0x10 with
// value 'T' accepts 'D' and 'T'.
struct QuadTest {
  uint8_t at[2];  // 0..3
  uint8_t ones[2];
  uint8_t value[2];

  constexpr bool passes(uint32_t quad) const {
    for (int k = 0; k < 2; ++k) {
      if ((uint8_t(quad >> (8 * at[k])) | ones[k]) != value[k]) return false;
    }
    return true;
  }
};

// What find_quad looks for: positions whose four bytes equal one of quads,
// and the tests the kernels use to pick candidate positions before comparing
// them. Every quad must pass one of the tests (covers() says whether it does);
// the fewer bytes the tests accept, the fewer candidates get compared.
struct QuadSearch {
  uint32_t quads[kMaxQuads] = {};
  int quad_count = 0;
  QuadTest tests[kMaxQuadTests] = {};
  int test_count = 0;

  constexpr bool covers() const {
    if (quad_count < 0 || quad_count > kMaxQuads || test_count < 1 || test_count > kMaxQuadTests)
      return false;
    for (int t = 0; t < test_count; ++t) {
      for (int k = 0; k < 2; ++k) {
        if (tests[t].at[k] > 3 || (tests[t].value[k] & tests[t].ones[k]) != tests[t].ones[k])
          return false;
      }
    }
    for (int q = 0; q < quad_count; ++q) {
      bool passed = false;
      for (int t = 0; t < test_count; ++t) passed = passed || tests[t].passes(quads[q]);
      if (!passed) return false;
    }
    return true;
  }
};

// The test on bytes at0 and at1 that the quads quads[0], quads[stride], ...
// (count of them, count >= 1) all pass: its merged bits are exactly those in
// which their bytes differ.
constexpr QuadTest merged_test(uint8_t at0, uint8_t at1, const uint32_t* quads, int count,
                               int stride = 1) {
  QuadTest t{{at0, at1}, {0, 0}, {0, 0}};
  for (int k = 0; k < 2; ++k) {
    const uint8_t first = uint8_t(quads[0] >> (8 * t.at[k]));
    for (int q = 0; q < count; ++q)
      t.ones[k] |= uint8_t(uint8_t(quads[q * stride] >> (8 * t.at[k])) ^ first);
    t.value[k] = uint8_t(first | t.ones[k]);
  }
  return t;
}

// A search for quads[0..count) with one test on the first and last bytes that
// accepts every quad's bytes (and whatever else the merged bits let through).
// A count outside 0..kMaxQuads gives a search that covers() rejects.
constexpr QuadSearch covering_search(const uint32_t* quads, int count) {
  QuadSearch s;
  if (count < 0 || count > kMaxQuads) return s;  // covers() is false
  s.quad_count = count;
  s.test_count = 1;
  for (int q = 0; q < count; ++q) s.quads[q] = quads[q];
  s.tests[0] = count > 0 ? merged_test(0, 3, quads, count) : QuadTest{{0, 3}, {0, 0}, {0, 0}};
  return s;
}

struct Kernel {
  const char* name;

  // First p in [begin, end) with *p equal to one of needles[0..3]; end if none.
  // Repeat a needle to search for fewer than four bytes.
  const char* (*find_any4)(const char* begin, const char* end, const char needles[4]);

  // First p in [begin, end - 3) such that the four bytes at p equal one of
  // search.quads (little-endian packed); end if none. search.covers() must
  // hold.
  const char* (*find_quad)(const char* begin, const char* end, const QuadSearch& search);

  // Number of line ends in [begin, end): each '\n', and each '\r' not followed
  // by '\n' inside the range.
  size_t (*count_lines)(const char* begin, const char* end);
};

// Packs four bytes the way find_quad reads them.
constexpr uint32_t make_quad(const char (&s)[5]) {
  return uint32_t(uint8_t(s[0])) | uint32_t(uint8_t(s[1])) << 8 | uint32_t(uint8_t(s[2])) << 16 |
         uint32_t(uint8_t(s[3])) << 24;
}

// The kernels compiled into this binary that the CPU can run, scalar first.
std::vector<const Kernel*> available_kernels();

// The kernel named `name` (scalar, sse2, avx2, neon). nullptr with *err set
// when the name is unknown or the CPU or build cannot run it.
const Kernel* find_kernel(std::string_view name, std::string* err);

// The best available kernel, or the one LEXPACK_LEXER names. nullptr with *err
// set when LEXPACK_LEXER names a kernel that cannot be used.
const Kernel* default_kernel(std::string* err);

// The scalar reference kernel; always available.
const Kernel& scalar_kernel();

}  // namespace lexpack::lexer
