// Precompiled headers: gcc reads NAME.gch in place of NAME where it looks for
// the first file a TU includes, and uses it as it is (a .gch made from other
// text than the header's now is still taken). Its bytes are not in the key,
// so a compile that may read one is passed through, and one that appears
// after a compile was cached must not let the cached object be served.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "tests/ninja_integration/launcher/launcher_fixture.h"

namespace lexpack::testing {
namespace {

class PrecompiledHeader : public NoFalseHit {
 protected:
  // A .gch of a p.h that returns 2 (the header in the project returns 1),
  // made with the flags the TU uses, at `where`.
  void put_stale_gch(const std::string& where) {
    dir_.write("other/p.h", "inline int f() { return 2; }\n");
    base::ProcessResult r = sh("g++ -O2 -x c++-header other/p.h -o " + where);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // The object the compiler makes now returns 2: the .gch was used.
  void expect_the_gch_is_used(const std::string& command) {
    ASSERT_EQ(sh(command + " -o ref.o").exit_code, 0);
    base::ProcessResult r = sh("objdump -d ref.o | grep -c 'mov *\\$0x2,'");
    ASSERT_EQ(r.out, "1\n") << "the compiler did not take the .gch: the case tests nothing";
  }
};

TEST_F(PrecompiledHeader, AGchThatAppearsIsNeverServedOver) {
  struct Case {
    std::string name;
    std::string flags;   // besides -O2 -c a.cpp
    std::string source;  // a.cpp
    std::string header;  // where p.h is
    std::string gch;     // where the stale .gch goes
  };
  const std::string body = "int g() { return f(); }\n";
  const Case cases[] = {
      {"beside_the_source", "", "#include \"p.h\"\n" + body, "p.h", "p.h.gch"},
      {"forced_include", "-include p.h", body, "p.h", "p.h.gch"},
      {"earlier_in_the_search_path", "-Iinc1 -Iinc2", "#include <p.h>\n" + body, "inc2/p.h",
       "inc1/p.h.gch"},
      {"first_include_in_a_branch", "-Iinc2",
       "#ifdef NOT_DEFINED\n#include <other.h>\n#else\n#include <p.h>\n#endif\n" + body, "inc2/p.h",
       "inc2/p.h.gch"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_EQ(sh("rm -rf a.cpp p.h p.h.gch inc1 inc2 other").exit_code, 0);
    dir_.write("a.cpp", c.source);
    dir_.write(c.header, "inline int f() { return 1; }\n");
    dir_.write("inc1/.keep", "");
    sleep(2);  // settled signatures: the closure memo is written
    const std::string command = "g++ -O2 " + c.flags + " -c a.cpp";
    expect_miss(command);
    expect_hit(command);
    put_stale_gch(c.gch);
    expect_the_gch_is_used(command);
    base::ProcessResult why = lexpack("explain " + command + " -o out.o");
    EXPECT_EQ(why.out.find("would hit"), std::string::npos) << why.out;
    EXPECT_NE(why.out.find("precompiled header may be used: " + c.gch), std::string::npos)
        << why.out;
    compile_and_compare(command);
    EXPECT_FALSE(last_was_hit()) << last_decision();
    sleep(2);  // and with settled signatures again
    compile_and_compare(command);
    EXPECT_FALSE(last_was_hit()) << last_decision();
  }
}

// A .gch the compiler does not look for changes nothing: one of a header the
// source reaches only through another. (Every include the source makes
// counts as maybe its first, whatever the conditions around it.)
TEST_F(PrecompiledHeader, AHeaderIncludedByAHeaderIsNeverPrecompiled) {
  dir_.write("a.cpp", "#include \"q.h\"\nint g() { return f(); }\n");
  dir_.write("q.h", "#include \"p.h\"\n");
  dir_.write("p.h", "inline int f() { return 1; }\n");
  put_stale_gch("p.h.gch");
  sleep(2);
  expect_miss("g++ -O2 -c a.cpp");
  expect_hit("g++ -O2 -c a.cpp");
  base::ProcessResult r = sh("objdump -d out.o | grep -c 'mov *\\$0x1,'");
  EXPECT_EQ(r.out, "1\n");
}

// clang's driver takes NAME.pch or NAME.gch for the first -include NAME.
TEST_F(PrecompiledHeader, ClangsForcedIncludePch) {
  dir_.write("a.cpp", "int g() { return f(); }\n");
  dir_.write("p.h", "inline int f() { return 1; }\n");
  sleep(2);
  dir_.write("m.h", "#define M 1\n");
  // The first -include, after an -imacros.
  const std::string command = "clang++-14 -O2 -imacros m.h -include p.h -c a.cpp";
  expect_miss(command);
  expect_hit(command);
  ASSERT_EQ(sh("clang++-14 -O2 -x c++-header p.h -o p.h.pch").exit_code, 0);
  compile_and_compare(command);
  EXPECT_FALSE(last_was_hit()) << last_decision();
  EXPECT_NE(last_decision().find("p.h.pch"), std::string::npos) << last_decision();
}

}  // namespace
}  // namespace lexpack::testing
