// Telling gcc from clang by the first lines of their --version answer (a
// binary named cc or c++ may be either).
#include "compiler/identity_types.h"

namespace lexpack::compiler {

CompilerKind kind_from_version_text(std::string_view text) {
  std::string_view line = text.substr(0, text.find('\n'));
  if (line.find("clang version") != std::string_view::npos) return CompilerKind::kClang;
  if (text.find("Free Software Foundation") != std::string_view::npos &&
      (line.find("gcc") != std::string_view::npos || line.find("g++") != std::string_view::npos ||
       line.find("GCC") != std::string_view::npos || line.find("c++") != std::string_view::npos ||
       line.find("cc ") != std::string_view::npos)) {
    return CompilerKind::kGcc;
  }
  return CompilerKind::kUnknown;
}

}  // namespace lexpack::compiler
