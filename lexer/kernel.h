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

struct Kernel {
  const char* name;

  // First p in [begin, end) with *p equal to one of needles[0..3]; end if none.
  // Repeat a needle to search for fewer than four bytes.
  const char* (*find_any4)(const char* begin, const char* end, const char needles[4]);

  // First p in [begin, end - 3) such that the four bytes at p equal one of
  // quads[0..count) (little-endian packed); end if none. count <= kMaxQuads.
  const char* (*find_quad)(const char* begin, const char* end, const uint32_t* quads, int count);

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
