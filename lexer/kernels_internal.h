// Private to lexer/: the kernel tables each instruction-set file defines, so the
// dispatcher can list them. Only the dispatcher decides which ones may be called.
#pragma once

#include <cstdint>

#include "lexer/kernel.h"

namespace lexpack::lexer {

// The test count is a template parameter of each kernel's search so its
// per-test loops unroll; this maps a run-time count (1..kMaxQuadTests) to the
// instantiation. Search is find_quad_n of the calling kernel's own file.
template <const char* (*Search1)(const char*, const char*, const QuadSearch&),
          const char* (*Search2)(const char*, const char*, const QuadSearch&)>
const char* find_quad_by_tests(const char* begin, const char* end, const QuadSearch& search) {
  static_assert(kMaxQuadTests == 2);
  if (end - begin < 4 || search.quad_count <= 0) return end;
  return search.test_count == 1 ? Search1(begin, end, search) : Search2(begin, end, search);
}

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
