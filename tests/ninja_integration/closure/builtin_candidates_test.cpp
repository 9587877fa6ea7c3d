// The builtin questions a scan asks ahead: those written out in #if and
// #elif lines, also through a library's own macro named after the query,
// and nothing from other directives.
#include "ninja_integration/closure/builtin_candidates.h"

#include <gtest/gtest.h>

#include "lexer/kernel.h"
#include "lexer/scanner.h"

namespace lexpack::closure {
namespace {

using Candidates = std::set<std::pair<std::string, std::string>>;

Candidates candidates(const std::string& text) {
  const lexer::ScanResult scan = lexer::scan(text, lexer::scalar_kernel());
  Candidates out;
  note_candidates(scan, &out);
  return out;
}

TEST(BuiltinCandidates, WrittenOutAndThroughALibrarysMacro) {
  EXPECT_EQ(candidates("#if __has_builtin(__builtin_expect) && __has_feature( x )\n#endif\n"),
            (Candidates{{"__has_builtin", "__builtin_expect"}, {"__has_feature", "x"}}));
  EXPECT_EQ(
      candidates("#define _GLIBCXX_HAS_BUILTIN(B) __has_builtin(B)\n"
                 "#if _GLIBCXX_HAS_BUILTIN(__is_same)\n#elif __glibc_has_attribute (__pure__)\n"
                 "#endif\n"),
      (Candidates{{"__has_builtin", "__is_same"}, {"__has_attribute", "__pure__"}}));
  EXPECT_EQ(candidates("#if Lib_Has_Cpp_Attribute(nodiscard)\n#endif\n"),
            (Candidates{{"__has_cpp_attribute", "nodiscard"}}));
}

TEST(BuiltinCandidates, OnlyCallsOfOneIdentifierInConditions) {
  // Not a condition; an argument that is no identifier; a name that only
  // contains the query's; a prefix glued to "has" without an underscore.
  EXPECT_EQ(candidates("#define X __has_builtin(__builtin_trap)\n"
                       "#if __has_builtin(a + b) || __has_builtin()\n#endif\n"
                       "#if MY_HAS_BUILTIN_X(y) || WHAS_BUILTIN(z)\n#endif\n"),
            Candidates{});
}

}  // namespace
}  // namespace lexpack::closure
