// Calls clang 14's minimizeSourceToDependencyDirectives, the scalar lexer that
// clang-scan-deps runs on every file: the baseline lexpack's lexer is measured against.
#include "bench/lexer/clang_minimizer.h"

#include <clang/Lex/DependencyDirectivesSourceMinimizer.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

namespace lexpack::bench {

struct ClangMinimizer::Buffers {
  llvm::SmallVector<char, 0> output;
  llvm::SmallVector<clang::minimize_source_to_dependency_directives::Token, 32> tokens;
};

ClangMinimizer::ClangMinimizer() : buffers_(new Buffers) {}
ClangMinimizer::~ClangMinimizer() {
  delete buffers_;
}

size_t ClangMinimizer::minimize(std::string_view bytes) {
  buffers_->output.clear();
  buffers_->tokens.clear();
  // Returns true on error.
  if (clang::minimizeSourceToDependencyDirectives(llvm::StringRef(bytes.data(), bytes.size()),
                                                  buffers_->output, buffers_->tokens)) {
    return 0;
  }
  return buffers_->tokens.size();
}

}  // namespace lexpack::bench
