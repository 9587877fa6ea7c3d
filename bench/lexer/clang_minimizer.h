// The benchmark's only view of clang: one call that minimizes a buffer the way
// clang-scan-deps does, so LLVM headers stay out of lexer_bench.cpp.
#pragma once

#include <cstddef>
#include <string_view>

namespace lexpack::bench {

// Reusable output buffers for clang's minimizer, so timing excludes allocation
// growth after the first file, as in clang-scan-deps' own caching.
class ClangMinimizer {
 public:
  ClangMinimizer();
  ~ClangMinimizer();
  ClangMinimizer(const ClangMinimizer&) = delete;
  ClangMinimizer& operator=(const ClangMinimizer&) = delete;

  // Minimizes bytes to dependency directives; returns the number of directive
  // tokens found (0 if clang reported an error).
  size_t minimize(std::string_view bytes);

 private:
  struct Buffers;
  Buffers* buffers_;
};

}  // namespace lexpack::bench
