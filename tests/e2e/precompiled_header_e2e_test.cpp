// Precompiled headers: gcc reads NAME.gch in place of NAME where it looks for
// the first file a TU includes, and uses it as it is (a .gch made from other
// text than the header's now is still taken). Its bytes are not in the key,
// so a compile that may read one is passed through, and one that appears
// after a compile was cached must not let the cached object be served.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "tests/support/launcher_fixture.h"

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
    // The .gch's bytes are in the key: a miss, stored, then a hit.
    expect_miss(command);
    sleep(2);  // and with settled signatures again
    expect_hit(command);
    // The same text made again: other bytes (gcc's .gch differs from run to
    // run), so another key.
    put_stale_gch(c.gch);
    expect_miss(command);
  }
}

// CMake's way: the precompiled header made by a compile of its own, which
// is cached too, so that a fresh build gets the same bytes back and the
// compiles that use them hit. Served reads leave the .gch to the filesystem
// (the compiler maps it).
TEST_F(PrecompiledHeader, MadeAndUsedThroughTheCache) {
  dir_.write("pch/p.h", "#include <vector>\ninline int f() { return 1; }\n");
  dir_.write("pch/p.h.cxx", "/* */\n");
  dir_.write("a.cpp", "int g() { return f(); }\n");
  sleep(2);
  const std::string make_pch =
      "g++ -O2 -x c++-header -include pch/p.h -c pch/p.h.cxx -o pch/p.h.gch";
  const std::string use = "g++ -O2 -include pch/p.h -c a.cpp -o a.o";
  for (const char* env : {"", "LEXPACK_SERVE_READS=1"}) {
    SCOPED_TRACE(env);
    ASSERT_EQ(lexpack(make_pch, env).exit_code, 0);
    EXPECT_TRUE(last_was_miss()) << last_decision();
    ASSERT_EQ(lexpack(use, env).exit_code, 0);
    EXPECT_TRUE(last_was_miss()) << last_decision();
    // gcc -H marks a precompiled header it took with '!'.
    EXPECT_EQ(sh("g++ -O2 -H -include pch/p.h -c a.cpp -o /dev/null 2>&1 | grep -c '^! '").out,
              "1\n");
    const std::string gch = dir_.read("pch/p.h.gch");
    // A fresh build: both made again, both from the cache.
    ASSERT_EQ(sh("rm pch/p.h.gch a.o").exit_code, 0);
    ASSERT_EQ(lexpack(make_pch, env).exit_code, 0);
    EXPECT_TRUE(last_was_hit()) << last_decision();
    EXPECT_TRUE(dir_.read("pch/p.h.gch") == gch);
    ASSERT_EQ(lexpack(use, env).exit_code, 0);
    EXPECT_TRUE(last_was_hit()) << last_decision();
    ASSERT_EQ(sh("g++ -O2 -include pch/p.h -c a.cpp -o ref.o").exit_code, 0);
    EXPECT_TRUE(dir_.read("a.o") == dir_.read("ref.o"));
    // The next round starts from nothing again.
    ASSERT_EQ(sh("rm -rf pch/p.h.gch a.o cache").exit_code, 0);
  }
}

// clang checks the headers' times against those its precompiled header
// recorded: one made elsewhere would not do, so clang's is not cached.
TEST_F(PrecompiledHeader, ClangsIsNotCached) {
  dir_.write("p.h", "inline int f() { return 1; }\n");
  ASSERT_EQ(lexpack("clang++-14 -O2 -x c++-header -c p.h -o p.h.pch").exit_code, 0);
  EXPECT_EQ(last_decision().rfind("passthrough: uncacheable: clang's precompiled header", 0), 0u)
      << last_decision();
  EXPECT_NE(lexpack("stats").out.find("uncacheable_precompiled_header"), std::string::npos);
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
  ASSERT_NE(sh("clang++-14 -### " + command.substr(11) + " 2>&1").out.find("-include-pch"),
            std::string::npos);
  // The .pch's bytes are in the key: a miss, then a hit.
  expect_miss(command);
  sleep(2);
  expect_hit(command);
}

}  // namespace
}  // namespace lexpack::testing
