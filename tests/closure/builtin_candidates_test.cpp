// The builtin questions a scan asks ahead: those written out in #if and
// #elif lines, also through a library's own macro named after the query,
// and nothing from other directives.
#include "closure/builtin_candidates.h"

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

// fmt's FMT_HAS_CPP17_ATTRIBUTE(x) (the query for C++17 on), googletest's
// GTEST_HAVE_ATTRIBUTE_(x) and GTEST_INTERNAL_HAVE_CPP_ATTRIBUTE(x), and
// scoped attribute names.
TEST(BuiltinCandidates, AStandardsNumberAndScopedNames) {
  EXPECT_EQ(candidates("#if FMT_HAS_CPP17_ATTRIBUTE(fallthrough) || "
                       "Fmt_Has_Cpp14_Attribute(deprecated)\n#endif\n"
                       "#if FMT_HAS_CPP_ATTRIBUTE(clang::lifetimebound)\n#endif\n"
                       "#if __has_cpp_attribute(gnu::always_inline)\n#endif\n"
                       "#if GTEST_HAVE_ATTRIBUTE_(format) || GTEST_HAVE_FEATURE_(f)\n#endif\n"
                       "#if GTEST_INTERNAL_HAVE_CPP_ATTRIBUTE(maybe_unused)\n#endif\n"),
            (Candidates{{"__has_attribute", "format"},
                        {"__has_cpp_attribute", "clang::lifetimebound"},
                        {"__has_cpp_attribute", "deprecated"},
                        {"__has_cpp_attribute", "fallthrough"},
                        {"__has_cpp_attribute", "gnu::always_inline"},
                        {"__has_cpp_attribute", "maybe_unused"},
                        {"__has_feature", "f"}}));
  // Not a scoped name; a number that is not after "cpp".
  EXPECT_EQ(candidates("#if __has_cpp_attribute(clang::) || __has_cpp_attribute(::x)\n#endif\n"
                       "#if LIB_HAS17_ATTRIBUTE(y) || HAS_CPP17ATTRIBUTE(z)\n#endif\n"),
            Candidates{});
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
