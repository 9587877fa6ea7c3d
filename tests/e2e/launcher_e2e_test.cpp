// End to end with real g++ and clang++: hits after wiping the build dir give
// the same object and depfile bytes as a fresh compile; warnings replay;
// failures are not cached; odd environments and arguments never break a build.
#include <gtest/gtest.h>

#include "tests/support/launcher_fixture.h"

namespace lexpack::testing {
namespace {

struct Flavor {
  const char* compiler;
  const char* flags;
};

class ByteIdentical : public LauncherTest, public ::testing::WithParamInterface<Flavor> {};

TEST_P(ByteIdentical, HitAfterWipingBuildDirMatchesFreshCompile) {
  Flavor f = GetParam();
  dir_.write("inc/deep.h", "#pragma once\n#define DEEP 3\n");
  dir_.write("inc/a.h",
             "#pragma once\n#include \"deep.h\"\n#include <vector>\n"
             "inline int a() { return DEEP; }\n");
  dir_.write("src/main.cpp",
             "#include \"a.h\"\n#include <string>\n"
             "int main() { std::vector<int> v{a()}; return int(v.size()); }\n");
  std::string args = std::string(f.compiler) + " " + f.flags +
                     " -Iinc -MD -MF build/main.d -c src/main.cpp -o build/main.o";
  // The reference: the compiler alone.
  ASSERT_EQ(sh("mkdir -p build && " + args).exit_code, 0);
  std::string ref_obj = dir_.read("build/main.o"), ref_dep = dir_.read("build/main.d");
  dir_.remove("build");
  sh("mkdir -p build");
  ASSERT_EQ(lexpack(args).exit_code, 0);
  EXPECT_TRUE(last_was_miss()) << last_decision();
  EXPECT_TRUE(dir_.read("build/main.o") == ref_obj);
  EXPECT_EQ(dir_.read("build/main.d"), ref_dep);
  dir_.remove("build");
  sh("mkdir -p build");
  base::ProcessResult hit = lexpack(args);
  ASSERT_EQ(hit.exit_code, 0) << hit.err;
  EXPECT_TRUE(last_was_hit()) << last_decision();
  EXPECT_TRUE(dir_.read("build/main.o") == ref_obj);
  EXPECT_EQ(dir_.read("build/main.d"), ref_dep);
}

INSTANTIATE_TEST_SUITE_P(Compilers, ByteIdentical,
                         ::testing::Values(Flavor{"g++", "-O2"}, Flavor{"g++", "-g"},
                                           Flavor{"g++", "-g -fdebug-prefix-map=$PWD=."},
                                           Flavor{"g++", "-MP"}, Flavor{"g++", "-g -gsplit-dwarf"},
                                           Flavor{"clang++-14", "-O2"}, Flavor{"clang++-14", "-g"},
                                           Flavor{"clang++-14", "-g -fdebug-prefix-map=$PWD=."},
                                           Flavor{"clang++-14", "-MP"}));

TEST_F(LauncherTest, SplitDwarfOutputIsRestored) {
  dir_.write("a.cpp", "int f(int x) { return x * 2; }\n");
  std::string args = "g++ -g -gsplit-dwarf -c a.cpp -o out/a.o";
  ASSERT_EQ(sh("mkdir -p out && " + args).exit_code, 0);
  std::string ref_obj = dir_.read("out/a.o"), ref_dwo = dir_.read("out/a.dwo");
  ASSERT_FALSE(ref_dwo.empty());
  ASSERT_EQ(lexpack(args).exit_code, 0);
  dir_.remove("out");
  sh("mkdir -p out");
  ASSERT_EQ(lexpack(args).exit_code, 0);
  EXPECT_TRUE(last_was_hit()) << last_decision();
  EXPECT_TRUE(dir_.read("out/a.o") == ref_obj);
  EXPECT_TRUE(dir_.read("out/a.dwo") == ref_dwo);
}

TEST_F(LauncherTest, NoDepfileRequestedLeavesNoDepfile) {
  dir_.write("a.cpp", "int f() { return 1; }\n");
  ASSERT_EQ(lexpack("g++ -c a.cpp -o a.o").exit_code, 0);
  EXPECT_TRUE(last_was_miss());
  ASSERT_EQ(sh("ls").out, "a.cpp\na.o\ncache\nlog.txt\n");
  dir_.remove("a.o");
  ASSERT_EQ(lexpack("g++ -c a.cpp -o a.o").exit_code, 0);
  EXPECT_TRUE(last_was_hit());
  ASSERT_EQ(sh("ls").out, "a.cpp\na.o\ncache\nlog.txt\n");
}

TEST_F(LauncherTest, WarningsReplayedOnHit) {
  dir_.write("w.cpp", "int f() { int unused; return 0; }\n");
  base::ProcessResult miss = lexpack("g++ -Wall -c w.cpp -o w.o");
  ASSERT_EQ(miss.exit_code, 0);
  ASSERT_NE(miss.err.find("unused"), std::string::npos) << miss.err;
  base::ProcessResult hit = lexpack("g++ -Wall -c w.cpp -o w.o");
  ASSERT_EQ(hit.exit_code, 0);
  EXPECT_TRUE(last_was_hit());
  EXPECT_EQ(hit.err, miss.err);
  EXPECT_EQ(hit.out, miss.out);
}

TEST_F(LauncherTest, FailingCompileNotCached) {
  dir_.write("bad.cpp", "int f() { return }\n");
  base::ProcessResult plain = sh("g++ -c bad.cpp -o bad.o");
  ASSERT_NE(plain.exit_code, 0);
  for (int i = 0; i < 2; ++i) {
    base::ProcessResult r = lexpack("g++ -c bad.cpp -o bad.o");
    EXPECT_EQ(r.exit_code, plain.exit_code);
    EXPECT_EQ(r.err, plain.err);
    EXPECT_TRUE(last_was_miss()) << last_decision();
  }
  EXPECT_FALSE(dir_.exists("bad.o"));
}

TEST_F(LauncherTest, ConcurrentCompilesOfOneTranslationUnit) {
  dir_.write("inc/h.h", "#include <map>\ninline int h() { return 7; }\n");
  dir_.write("c.cpp",
             "#include \"h.h\"\nint g() { std::map<int,int> m; return h() + m.size(); }\n");
  ASSERT_EQ(sh("g++ -Iinc -MD -c c.cpp -o ref.o").exit_code, 0);
  std::string ref = dir_.read("ref.o");
  std::string script;
  for (int i = 0; i < 6; ++i) {
    script +=
        std::string(LEXPACK_BIN) + " g++ -Iinc -MD -c c.cpp -o out" + std::to_string(i) + ".o & ";
  }
  // Half write to the same output at once.
  for (int i = 0; i < 3; ++i)
    script += std::string(LEXPACK_BIN) + " g++ -Iinc -MD -c c.cpp -o same.o & ";
  base::ProcessResult r = sh(script + "wait");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int i = 0; i < 6; ++i) {
    std::string name = "out" + std::to_string(i) + ".o";
    EXPECT_TRUE(dir_.read(name).size() == ref.size()) << name;
  }
  EXPECT_TRUE(dir_.read("same.o") == ref);
  // And every later compile is a hit with the right bytes.
  ASSERT_EQ(lexpack("g++ -Iinc -MD -c c.cpp -o same.o").exit_code, 0);
  EXPECT_TRUE(last_was_hit());
  EXPECT_TRUE(dir_.read("same.o") == ref);
}

TEST_F(LauncherTest, UnusableCacheDirStillCompiles) {
  dir_.write("a.cpp", "int f() { return 1; }\n");
  dir_.write("not-a-dir", "file");
  base::ProcessResult r = sh(std::string(LEXPACK_BIN) + " g++ -c a.cpp -o a.o",
                             "LEXPACK_DIR=" + shell_quote(dir_.at("not-a-dir/cache")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(dir_.exists("a.o"));
  EXPECT_EQ(last_decision().rfind("passthrough", 0), 0u) << last_decision();
}

TEST_F(LauncherTest, MissingCacheDirIsCreated) {
  dir_.write("a.cpp", "int f() { return 1; }\n");
  std::string env = "LEXPACK_DIR=" + shell_quote(dir_.at("new/deeper/cache"));
  ASSERT_EQ(sh(std::string(LEXPACK_BIN) + " g++ -c a.cpp -o a.o", env).exit_code, 0);
  dir_.remove("a.o");
  ASSERT_EQ(sh(std::string(LEXPACK_BIN) + " g++ -c a.cpp -o a.o", env).exit_code, 0);
  EXPECT_TRUE(last_was_hit()) << last_decision();
  EXPECT_TRUE(dir_.exists("a.o"));
}

TEST_F(LauncherTest, ReadOnlyCacheServesButDoesNotStore) {
  dir_.write("a.cpp", "int f() { return 1; }\n");
  ASSERT_EQ(lexpack("g++ -c a.cpp -o a.o").exit_code, 0);
  sh("chmod -R a-w cache");
  if (sh("touch cache/probe").exit_code == 0) GTEST_SKIP() << "running with permission override";
  dir_.remove("a.o");
  base::ProcessResult r = lexpack("g++ -c a.cpp -o a.o");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(dir_.exists("a.o"));
}

TEST_F(LauncherTest, GarbageArgumentsBehaveLikeTheCompiler) {
  dir_.write("a.cpp", "int f() { return 1; }\n");
  for (const char* args : {"-c", "-c a.cpp -o", "--no-such-flag -c a.cpp -o x.o", "-c nofile.cpp",
                           "-c a.cpp b.cpp", "", "-x nonsense -c a.cpp"}) {
    base::ProcessResult plain = sh(std::string("g++ ") + args);
    base::ProcessResult via = lexpack(std::string("g++ ") + args);
    EXPECT_EQ(via.exit_code, plain.exit_code) << args;
    EXPECT_EQ(via.err, plain.err) << args;
  }
  base::ProcessResult none = lexpack("no-such-compiler-xyz -c a.cpp");
  EXPECT_EQ(none.exit_code, 127);
  EXPECT_NE(none.err.find("lexpack: error:"), std::string::npos);
}

TEST_F(LauncherTest, NonCompilerRunsUnchanged) {
  base::ProcessResult r = lexpack("echo -c hello.cpp -o x.o");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "-c hello.cpp -o x.o\n");
}

TEST_F(LauncherTest, DisableVariablePassesThrough) {
  dir_.write("a.cpp", "int f() { return 1; }\n");
  ASSERT_EQ(lexpack("g++ -c a.cpp -o a.o", "LEXPACK_DISABLE=1").exit_code, 0);
  EXPECT_EQ(last_decision(), "passthrough: LEXPACK_DISABLE is set");
  EXPECT_FALSE(dir_.exists("cache"));
}

}  // namespace
}  // namespace lexpack::testing
