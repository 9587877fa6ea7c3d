// libFuzzer target: every kernel must give the scalar kernel's exact ScanResult
// on any input, and each byte-search primitive must agree with the scalar one.
// A disagreement traps, so the fuzzer reports it like a crash.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "lexer/kernel.h"
#include "lexer/scanner.h"

namespace lexpack::lexer {
namespace {

// Runs the three primitives of k and of the scalar kernel over [b, e) with
// needles and quad searches taken from the input itself.
void check_primitives(const Kernel& k, const char* b, const char* e, const char needles[4],
                      const QuadSearch* searches, int search_count) {
  const Kernel& ref = scalar_kernel();
  if (k.find_any4(b, e, needles) != ref.find_any4(b, e, needles)) __builtin_trap();
  for (int i = 0; i < search_count; ++i) {
    if (k.find_quad(b, e, searches[i]) != ref.find_quad(b, e, searches[i])) __builtin_trap();
  }
  if (k.count_lines(b, e) != ref.count_lines(b, e)) __builtin_trap();
}

// Two tests on the byte positions `at` picks, quads alternating between them,
// each test's merged bits exactly what its quads need.
QuadSearch split_search(const uint32_t* quads, int count, uint8_t at) {
  QuadSearch s;
  s.quad_count = count;
  s.test_count = count > 1 ? 2 : 1;
  for (int q = 0; q < count; ++q) s.quads[q] = quads[q];
  for (int t = 0; t < s.test_count; ++t) {
    const int in_group = (count - t + s.test_count - 1) / s.test_count;
    s.tests[t] = merged_test(uint8_t((at >> (4 * t)) & 3), uint8_t((at >> (4 * t + 2)) & 3),
                             quads + t, in_group, s.test_count);
  }
  if (!s.covers()) __builtin_trap();
  return s;
}

void fuzz_one(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::vector<const Kernel*> kernels = available_kernels();

  const ScanResult want = scan(bytes, scalar_kernel());
  static ScanResult reused;  // holds the previous input's result: nothing may leak
  for (const Kernel* k : kernels) {
    scan_into(bytes, *k, &reused);
    if (reused != want) __builtin_trap();
    if (k == &scalar_kernel()) continue;
    if (scan(bytes, *k) != want) __builtin_trap();
  }

  // Needles and quads from the first bytes (cycled), so the fuzzer controls them
  // and they tend to occur in the rest of the input.
  if (size == 0) return;
  char needles[4];
  for (int i = 0; i < 4; ++i) needles[i] = char(data[size_t(i) % size]);
  uint32_t quads[kMaxQuads];
  const int count = 1 + data[0] % kMaxQuads;
  for (int q = 0; q < count; ++q) {
    uint32_t v = 0;
    for (int j = 0; j < 4; ++j) v |= uint32_t(data[size_t(1 + 4 * q + j) % size]) << (8 * j);
    quads[q] = v;
  }
  const QuadSearch searches[2] = {covering_search(quads, count),
                                  split_search(quads, count, data[size / 2])};
  // Several start and end points move the input across block alignments; the
  // range always ends at the end of the fuzzer's exact-size buffer or before it.
  const char* b = bytes.data();
  const char* e = b + size;
  for (const Kernel* k : kernels) {
    if (k == &scalar_kernel()) continue;
    for (size_t skip = 0; skip < 4 && skip <= size; ++skip) {
      check_primitives(*k, b + skip, e, needles, searches, 2);
      check_primitives(*k, b, e - skip, needles, searches, 2);
    }
    check_primitives(*k, b + size / 2, e, needles, searches, 2);
  }
}

}  // namespace
}  // namespace lexpack::lexer

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lexpack::lexer::fuzz_one(data, size);
  return 0;
}
