// Reading gcc/clang depfiles: escapes, continuations, -MP phony rules.
#include "base/depfile_reader.h"

#include <gtest/gtest.h>

namespace lexpack::base {
namespace {

TEST(DepfileReader, RulesEscapesAndPhonyTargets) {
  std::vector<std::string> deps;
  std::string err;
  ASSERT_TRUE(parse_depfile(
      "obj/a.o: src/a.cpp /usr/include/stdc-predef.h \\\n inc/with\\ space.h inc/x\\#y.h a$$b.h\n\n"
      "inc/with\\ space.h:\n\ninc/x\\#y.h:\n",
      &deps, &err))
      << err;
  EXPECT_EQ(deps, (std::vector<std::string>{"src/a.cpp", "/usr/include/stdc-predef.h",
                                            "inc/with space.h", "inc/x#y.h", "a$b.h"}));
}

TEST(DepfileReader, SeveralTargetsAndCrLf) {
  std::vector<std::string> deps;
  std::string err;
  ASSERT_TRUE(parse_depfile("t1 t2: a.h \\\r\n b.h\r\n", &deps, &err)) << err;
  EXPECT_EQ(deps, (std::vector<std::string>{"a.h", "b.h"}));
}

TEST(DepfileReader, RejectsRuleWithoutColon) {
  std::vector<std::string> deps;
  std::string err;
  EXPECT_FALSE(parse_depfile("just words here\n", &deps, &err));
  EXPECT_NE(err.find("line 1"), std::string::npos);
}

}  // namespace
}  // namespace lexpack::base
