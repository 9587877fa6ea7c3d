// Private to lexer/: the kernel tables each instruction-set file defines, so the
// dispatcher can list them. Only the dispatcher decides which ones may be called.
#pragma once

#include <cstdint>
#include <cstring>

#include "lexer/kernel.h"

namespace lexpack::lexer {

// The test count is a template parameter of each kernel's search so its
// per-test loops unroll; this maps a run-time count (1..kMaxQuadTests) to the
// instantiation. Search is find_quad_n (below) of the calling kernel's own
// searcher.
template <const char* (*Search1)(const char*, const char*, const QuadSearch&),
          const char* (*Search2)(const char*, const char*, const QuadSearch&)>
const char* find_quad_by_tests(const char* begin, const char* end, const QuadSearch& search) {
  static_assert(kMaxQuadTests == 2);
  if (end - begin < 4 || search.quad_count <= 0) return end;
  return search.test_count == 1 ? Search1(begin, end, search) : Search2(begin, end, search);
}

// The candidate filter of a quad search, written once for the vector kernels:
// Ops is the kernel's vector type (Ops::Vec) with load, splat, bit_or,
// bit_and and eq (bytewise equal: all ones or zero per lane). The test count
// is a template parameter so the per-test loops unroll.
template <class Ops, int N>
class QuadFilter {
 public:
  using Vec = typename Ops::Vec;
  explicit QuadFilter(const QuadSearch& s) {
    for (int t = 0; t < N; ++t) {
      for (int k = 0; k < 2; ++k) {
        ones_[t][k] = Ops::splat(s.tests[t].ones[k]);
        value_[t][k] = Ops::splat(s.tests[t].value[k]);
        at_[t][k] = s.tests[t].at[k];
      }
    }
  }
  // All ones in each lane whose position (p + lane) passes a test; reads up to
  // three bytes past the vector at p.
  Vec passes(const char* p) const {
    Vec m = Ops::bit_and(fits(p, 0, 0), fits(p, 0, 1));
    for (int t = 1; t < N; ++t) m = Ops::bit_or(m, Ops::bit_and(fits(p, t, 0), fits(p, t, 1)));
    return m;
  }

 private:
  Vec fits(const char* p, int t, int k) const {
    return Ops::eq(Ops::bit_or(Ops::load(p + at_[t][k]), ones_[t][k]), value_[t][k]);
  }
  Vec ones_[N][2], value_[N][2];
  int at_[N][2];
};

// Each kernel file is built for its own instruction set, so what they share
// from here has internal linkage: the linker must never pick one file's copy
// (say, the AVX2 one) for another's calls.
namespace {

// True when the four bytes at p are one of the search's quads. The quads are
// packed little-endian, as every vector kernel's target is.
inline bool is_quad(const char* p, const QuadSearch& s) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  for (int q = 0; q < s.quad_count; ++q) {
    if (v == s.quads[q]) return true;
  }
  return false;
}

// The quad search of a vector kernel, its loop written once: Quads is the
// kernel's own searcher for one test count, with
//   kWidth              positions per block,
//   candidates(p)       a mask of the positions p.. that pass a test (it reads
//                       up to kWidth + 3 bytes from p),
//   verify(p, m)        the index of the first candidate in m that is a quad,
//                       -1 if none,
//   low_lanes(n)        the mask of the first n positions.
// Blocks go forward from begin; the tail is an overlapping last block, or a
// zero-padded stack copy when the input is shorter than one: never a byte
// outside [begin, end) is read.
template <class Quads>
const char* find_quad_n(const char* begin, const char* end, const QuadSearch& search) {
  constexpr int kWidth = Quads::kWidth;
  const Quads qs(search);
  const char* stop = end - 3;  // one past the last start position
  const char* p = begin;
  while (stop - p >= kWidth) {
    if (const auto m = qs.candidates(p)) {
      if (const int i = qs.verify(p, m); i >= 0) return p + i;
    }
    p += kWidth;
  }
  if (p == stop) return end;
  if (stop - begin >= kWidth) {
    const char* q = stop - kWidth;  // positions before p were already rejected
    if (const auto m = qs.candidates(q)) {
      if (const int i = qs.verify(q, m); i >= 0) return q + i;
    }
    return end;
  }
  alignas(kWidth) char buf[2 * kWidth] = {};
  std::memcpy(buf, p, size_t(end - p));
  if (const auto m = qs.candidates(buf) & Quads::low_lanes(size_t(stop - p))) {
    if (const int i = qs.verify(buf, m); i >= 0) return p + i;
  }
  return end;
}

}  // namespace

// kernel_scalar.cpp: portable SWAR code, always present.
extern const Kernel kScalarKernel;

#if defined(LEXPACK_HAVE_X86_KERNELS)
// kernel_sse2.cpp: SSE2 is part of x86-64, so always runnable there.
extern const Kernel kSse2Kernel;
// kernel_avx2.cpp: built with -mavx2 -mbmi -mbmi2 -mpopcnt; never touch it
// unless the CPU reports all of those.
extern const Kernel kAvx2Kernel;
#endif

#if defined(LEXPACK_HAVE_NEON_KERNEL)
// kernel_neon.cpp: NEON (Advanced SIMD) is part of ARMv8-A.
extern const Kernel kNeonKernel;
#endif

}  // namespace lexpack::lexer
