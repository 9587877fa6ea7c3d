// Private to lexer/: the kernel tables each instruction-set file defines, so the
// dispatcher can list them. Only the dispatcher decides which ones may be called.
#pragma once

#include "lexer/kernel.h"

namespace lexpack::lexer {

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
