// Private to lexer/: the kernel tables each instruction-set file defines, so the
// dispatcher can list them. Only the dispatcher decides which ones may be called.
#pragma once

#include <cstdint>

#include "lexer/kernel.h"

namespace lexpack::lexer {

// The quad count is a template parameter of each kernel's search so its
// per-quad loops unroll; this maps a run-time count (1..kMaxQuads) to the
// instantiation. Search is find_quad_n of the calling kernel's own file.
template <const char* (*Search1)(const char*, const char*, const uint32_t*),
          const char* (*Search2)(const char*, const char*, const uint32_t*),
          const char* (*Search3)(const char*, const char*, const uint32_t*),
          const char* (*Search4)(const char*, const char*, const uint32_t*),
          const char* (*Search5)(const char*, const char*, const uint32_t*),
          const char* (*Search6)(const char*, const char*, const uint32_t*),
          const char* (*Search7)(const char*, const char*, const uint32_t*),
          const char* (*Search8)(const char*, const char*, const uint32_t*)>
const char* find_quad_by_count(const char* begin, const char* end, const uint32_t* quads,
                               int count) {
  static_assert(kMaxQuads == 8);
  if (end - begin < 4) return end;
  switch (count) {
    case 1:
      return Search1(begin, end, quads);
    case 2:
      return Search2(begin, end, quads);
    case 3:
      return Search3(begin, end, quads);
    case 4:
      return Search4(begin, end, quads);
    case 5:
      return Search5(begin, end, quads);
    case 6:
      return Search6(begin, end, quads);
    case 7:
      return Search7(begin, end, quads);
    case 8:
      return Search8(begin, end, quads);
    default:
      return end;
  }
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
