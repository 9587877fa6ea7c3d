// Chooses a kernel once, at run time: what this build contains, what the CPU
// can run, and what LEXPACK_LEXER forces. Built without any ISA flags, so no
// code here runs AVX2 instructions before the CPU has been asked.
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "lexer/kernel.h"
#include "lexer/kernels_internal.h"

// glibc 2.33 on; its header is C that g++ takes and clang++ does not (_Bool).
#if defined(LEXPACK_HAVE_X86_KERNELS) && !defined(__clang__) && __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#endif

namespace lexpack::lexer {
namespace {

// Every kernel name any build knows, in order of preference (worst first).
constexpr std::string_view kAllNames[] = {"scalar", "sse2", "avx2", "neon"};

#if defined(LEXPACK_HAVE_X86_KERNELS)
bool cpu_runs_avx2() {
  // Active: the CPU has it and the OS saves its state (YMM for AVX2). glibc
  // found these as the process started; libgcc's __builtin_cpu_supports
  // would ask the CPU again in a constructor of its own.
#if defined(CPU_FEATURE_ACTIVE)
  return CPU_FEATURE_ACTIVE(AVX2) && CPU_FEATURE_ACTIVE(BMI1) && CPU_FEATURE_ACTIVE(BMI2) &&
         CPU_FEATURE_ACTIVE(POPCNT);
#else
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
         __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
#endif
}
#endif

std::vector<const Kernel*> detect() {
  std::vector<const Kernel*> kernels{&kScalarKernel};
#if defined(LEXPACK_HAVE_X86_KERNELS)
  kernels.push_back(&kSse2Kernel);
  if (cpu_runs_avx2()) kernels.push_back(&kAvx2Kernel);
#endif
#if defined(LEXPACK_HAVE_NEON_KERNEL)
  kernels.push_back(&kNeonKernel);
#endif
  return kernels;
}

const std::vector<const Kernel*>& kernels() {
  static const std::vector<const Kernel*> list = detect();
  return list;
}

std::string join_names(const std::vector<const Kernel*>& list) {
  std::string out;
  for (const Kernel* k : list) {
    if (!out.empty()) out += ", ";
    out += k->name;
  }
  return out;
}

}  // namespace

std::vector<const Kernel*> available_kernels() {
  return kernels();
}

const Kernel* find_kernel(std::string_view name, std::string* err) {
  for (const Kernel* k : kernels()) {
    if (name == k->name) return k;
  }
  if (err) {
    bool known = false;
    for (std::string_view n : kAllNames) known = known || n == name;
    std::string valid;
    for (std::string_view n : kAllNames) {
      if (!valid.empty()) valid += ", ";
      valid += n;
    }
    if (known) {
      *err = "lexer kernel '" + std::string(name) +
             "' is not supported by this CPU or build (available: " + join_names(kernels()) + ")";
    } else {
      *err = "unknown lexer kernel '" + std::string(name) + "' (valid names: " + valid +
             "; available here: " + join_names(kernels()) + ")";
    }
  }
  return nullptr;
}

const Kernel* default_kernel(std::string* err) {
  const char* forced = std::getenv("LEXPACK_LEXER");
  if (forced && *forced) {
    std::string why;
    const Kernel* k = find_kernel(forced, &why);
    if (!k && err) *err = "LEXPACK_LEXER=" + std::string(forced) + ": " + why;
    return k;
  }
  return kernels().back();
}

const Kernel& scalar_kernel() {
  return kScalarKernel;
}

}  // namespace lexpack::lexer
