// A file's content as a relocated key counts it: include directive operands
// under base_dir renamed, every other byte as it is.
#include "closure/relocated_content.h"

#include <gtest/gtest.h>

#include "base/relocation.h"

namespace lexpack::closure {
namespace {

cache::Hash128 in_checkout(const std::string& text, const std::string& top) {
  return relocated_content(text, "/checkouts", [&](std::string_view path) {
    return base::relative_to(path, top + "/build");
  });
}

// `text` with each "@" written as the checkout's top directory.
std::string at(std::string text, const std::string& top) {
  for (size_t i = text.find('@'); i != std::string::npos; i = text.find('@', i + top.size())) {
    text.replace(i, 1, top);
  }
  return text;
}

TEST(RelocatedContent, IncludeOperandsUnderBaseDirAreNamedAsTheKeyNamesThem) {
  const std::string text =
      "#pragma GCC system_header\n#include <vector>\n#include \"@/inc/a.h\"\n"
      "  #  include_next <@/inc/b.h>\n#if __has_include(\"@/inc/c.h\")\n#endif\nint x;\n";
  const cache::Hash128 one = in_checkout(at(text, "/checkouts/one"), "/checkouts/one");
  EXPECT_EQ(one, in_checkout(at(text, "/checkouts/other/two"), "/checkouts/other/two"));
  EXPECT_FALSE(one == cache::hash_bytes(at(text, "/checkouts/one")));
}

TEST(RelocatedContent, TheSamePathElsewhereKeepsTheBytes) {
  for (const std::string text : {
           "#include \"@/inc/a.h\"\nconst char* w = \"@/inc/a.h\";\n",
           "#include \"@/inc/a.h\"\n// see @/inc/a.h\n",
           "#include \"@/inc/a.h\"\n/*\n#include \"@/inc/a.h\"\n*/\n",
           "const char* r = R\"(\n#include \"@/inc/a.h\"\n)\";\n",
       }) {
    EXPECT_FALSE(in_checkout(at(text, "/checkouts/one"), "/checkouts/one") ==
                 in_checkout(at(text, "/checkouts/two"), "/checkouts/two"))
        << text;
  }
}

TEST(RelocatedContent, OtherFilesOrPathsOutsideBaseDirDiffer) {
  EXPECT_FALSE(in_checkout("#include \"/checkouts/one/inc/a.h\"\n", "/checkouts/one") ==
               in_checkout("#include \"/checkouts/two/inc/b.h\"\n", "/checkouts/two"));
  // The same relative name from another working directory names another file.
  EXPECT_FALSE(in_checkout("#include \"/checkouts/one/inc/a.h\"\n", "/checkouts/one") ==
               in_checkout("#include \"/checkouts/two/inc/a.h\"\n", "/checkouts/two/sub"));
  const std::string outside = "#include \"/opt/inc/a.h\"\n";
  EXPECT_EQ(in_checkout(outside, "/checkouts/one"), cache::hash_bytes(outside));
  // A renamed operand is not the same as the name written relative.
  EXPECT_FALSE(in_checkout("#include \"/checkouts/one/inc/a.h\"\n", "/checkouts/one") ==
               cache::hash_bytes("#include \"../inc/a.h\"\n"));
}

TEST(RelocatedContent, NamesAbsoluteIncludeReadsTheSummary) {
  FileSummary s;
  s.includes.push_back({lexer::DirectiveKind::kInclude, true, false, "vector"});
  EXPECT_FALSE(names_absolute_include(s));
  s.includes.push_back({lexer::DirectiveKind::kInclude, false, false, "/abs/a.h"});
  EXPECT_TRUE(names_absolute_include(s));
}

}  // namespace
}  // namespace lexpack::closure
