// Two checkouts of one project at different paths share one cache through
// base_dir: the second one's compiles are hits whose objects, depfiles and
// messages are what its own compiler writes, naming none of the first's
// paths; where a path can reach the object the second one misses and
// `lexpack explain` says why.
#include <stdlib.h>

#include <gtest/gtest.h>

#include <string>

#include "tests/support/launcher_fixture.h"

namespace lexpack::testing {
namespace {

class Relocation : public LauncherTest {
 protected:
  void SetUp() override {
    root_ = dir_.real_path();
    for (const std::string& c : {a_, b_}) {
      dir_.write(c + "/inc/util.h",
                 "#pragma once\n#include <cassert>\n"
                 "inline int twice(int x) { assert(x > 0); return 2 * x; }\n");
      dir_.write(c + "/src/x.cpp",
                 "#include \"util.h\"\n#include <vector>\n"
                 "#warning relocated build\n"
                 "int f(int x) { std::vector<int> v{twice(x)}; return v[0]; }\n");
      ASSERT_EQ(sh("mkdir -p " + c + "/build").exit_code, 0);
    }
  }
  std::string checkout(const std::string& c) const { return root_ + "/" + c; }
  // The command CMake writes: absolute source and -I, relative -o and -MF.
  std::string command(const std::string& c, const std::string& flags) const {
    std::string top = checkout(c);
    return "g++ -O2 " + flags + " -I" + top + "/inc -MD -MT x.o -MF x.o.d -o x.o -c " + top +
           "/src/x.cpp";
  }
  std::string map(const std::string& c) const { return "-ffile-prefix-map=" + checkout(c) + "=."; }
  base::ProcessResult run(const std::string& c, const std::string& line) {
    return sh("cd " + c + "/build && " + line, "LEXPACK_BASE_DIR=" + shell_quote(root_));
  }
  // Builds in `c` with lexpack; returns its stderr.
  std::string build(const std::string& c, const std::string& flags) {
    base::ProcessResult p = run(c, std::string(LEXPACK_BIN) + " " + command(c, flags));
    EXPECT_EQ(p.exit_code, 0) << p.err;
    return p.err;
  }
  // The compiler alone in `c`: its object, depfile and stderr.
  struct Plain {
    std::string object, depfile, err;
  };
  Plain plain(const std::string& c, const std::string& flags) {
    base::ProcessResult p = run(c, command(c, flags));
    EXPECT_EQ(p.exit_code, 0) << p.err;
    Plain out{dir_.read(c + "/build/x.o"), dir_.read(c + "/build/x.o.d"), p.err};
    sh("rm -f " + c + "/build/x.o " + c + "/build/x.o.d");
    return out;
  }
  std::string explain(const std::string& c, const std::string& flags) {
    return run(c, std::string(LEXPACK_BIN) + " explain " + command(c, flags)).out;
  }

  std::string root_;
  std::string a_ = "one/proj";
  std::string b_ = "other/checkout/proj";
};

TEST_F(Relocation, SecondCheckoutHitsWithItsOwnPaths) {
  std::string flags_a = map(a_), flags_b = map(b_);
  Plain ref = plain(b_, flags_b);
  ASSERT_NE(ref.depfile.find(checkout(b_) + "/inc/util.h"), std::string::npos) << ref.depfile;
  ASSERT_NE(ref.err.find(checkout(b_) + "/src/x.cpp"), std::string::npos) << ref.err;

  build(a_, flags_a);
  EXPECT_TRUE(last_was_miss()) << last_decision();
  std::string err = build(b_, flags_b);
  EXPECT_TRUE(last_was_hit()) << last_decision();
  EXPECT_TRUE(dir_.read(b_ + "/build/x.o") == ref.object);
  EXPECT_EQ(dir_.read(b_ + "/build/x.o.d"), ref.depfile);
  EXPECT_EQ(err, ref.err);
  for (const std::string& text :
       {dir_.read(b_ + "/build/x.o"), dir_.read(b_ + "/build/x.o.d"), err}) {
    EXPECT_EQ(text.find(checkout(a_)), std::string::npos);
  }
  EXPECT_NE(explain(b_, flags_b).find("relocatable: paths under"), std::string::npos);
}

TEST_F(Relocation, DebugInfoWithPrefixMapsHits) {
  std::string flags_a = "-g " + map(a_), flags_b = "-g " + map(b_);
  Plain ref = plain(b_, flags_b);
  build(a_, flags_a);
  EXPECT_TRUE(last_was_miss()) << last_decision();
  build(b_, flags_b);
  EXPECT_TRUE(last_was_hit()) << last_decision();
  EXPECT_TRUE(dir_.read(b_ + "/build/x.o") == ref.object);
  EXPECT_EQ(dir_.read(b_ + "/build/x.o.d"), ref.depfile);
  EXPECT_EQ(dir_.read(b_ + "/build/x.o").find(checkout(a_)), std::string::npos);
}

// A map whose old prefix is base_dir itself, above two checkouts at the
// same depth, writes each checkout's directories into __FILE__ (the assert)
// and, with -g, the debug info ("./one/proj/src/x.cpp"): the other checkout
// must never get that object.
TEST_F(Relocation, AMapAboveTheCheckoutsNeverServesTheOtherCheckoutsObject) {
  const std::string two = "two/proj";
  ASSERT_EQ(sh("mkdir -p two && cp -r " + a_ + " two/").exit_code, 0);
  for (const std::string g : {"", "-g "}) {
    SCOPED_TRACE(g);
    sh("rm -rf cache");
    const std::string above = g + "-ffile-prefix-map=" + root_ + "=.";
    Plain ref = plain(two, above);
    ASSERT_NE(ref.object.find("./two/proj"), std::string::npos);
    build(a_, above);
    EXPECT_TRUE(last_was_miss()) << last_decision();
    build(two, above);
    EXPECT_TRUE(last_was_miss()) << last_decision();
    EXPECT_TRUE(dir_.read(two + "/build/x.o") == ref.object);
    sh("rm " + two + "/build/x.o");
    build(two, above);
    EXPECT_TRUE(last_was_hit()) << last_decision();
    EXPECT_TRUE(dir_.read(two + "/build/x.o") == ref.object);
  }
}

// A generated header that names its checkout in a string (CMake's
// configure_file of a source dir): no map rewrites it, so the result must not
// be shared, but it is kept for this working directory, and hits there.
TEST_F(Relocation, AResultNamingItsCheckoutInItsTextHitsInThatCheckout) {
  for (const std::string& c : {a_, b_}) {
    dir_.write(c + "/inc/where.h", "#define DATA_DIR \"" + checkout(c) + "/data\"\n");
    dir_.write(c + "/src/x.cpp", "#include \"where.h\"\nconst char* data_dir = DATA_DIR;\n");
  }
  Plain ref = plain(a_, map(a_));
  ASSERT_NE(ref.object.find(checkout(a_) + "/data"), std::string::npos);
  build(a_, map(a_));
  EXPECT_TRUE(last_was_miss()) << last_decision();
  EXPECT_NE(dir_.read("log.txt").find("stored for this working directory only"), std::string::npos)
      << dir_.read("log.txt");
  sh("rm " + a_ + "/build/x.o " + a_ + "/build/x.o.d");
  EXPECT_NE(explain(a_, map(a_)).find("would hit"), std::string::npos);
  build(a_, map(a_));
  EXPECT_TRUE(last_was_hit()) << last_decision();
  EXPECT_TRUE(dir_.read(a_ + "/build/x.o") == ref.object);
  EXPECT_EQ(dir_.read(a_ + "/build/x.o.d"), ref.depfile);
  // The other checkout gets its own object.
  Plain other = plain(b_, map(b_));
  build(b_, map(b_));
  EXPECT_TRUE(last_was_miss()) << last_decision();
  EXPECT_TRUE(dir_.read(b_ + "/build/x.o") == other.object);
}

TEST_F(Relocation, DebugInfoWithoutPrefixMapsMissesAndSaysWhy) {
  // Only the macro map: __FILE__ is covered but -g records the paths.
  std::string flags_a = "-g -fmacro-prefix-map=" + checkout(a_) + "=.";
  std::string flags_b = "-g -fmacro-prefix-map=" + checkout(b_) + "=.";
  Plain ref = plain(b_, flags_b);
  build(a_, flags_a);
  EXPECT_TRUE(last_was_miss()) << last_decision();
  std::string why = explain(b_, flags_b);
  EXPECT_NE(why.find("not relocatable: -g records the working directory; add "
                     "-ffile-prefix-map=TOP=. with TOP the checkout's top directory (under " +
                     root_ + ")"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("would miss"), std::string::npos) << why;
  build(b_, flags_b);
  EXPECT_TRUE(last_was_miss()) << last_decision();
  EXPECT_TRUE(dir_.read(b_ + "/build/x.o") == ref.object);
}

TEST_F(Relocation, FileMacroWithoutPrefixMapMissesAndSaysWhy) {
  Plain ref = plain(b_, "");
  build(a_, "");
  EXPECT_TRUE(last_was_miss()) << last_decision();
  std::string why = explain(b_, "");
  EXPECT_NE(why.find("not relocatable: __FILE__ may record " + checkout(b_)), std::string::npos)
      << why;
  build(b_, "");
  EXPECT_TRUE(last_was_miss()) << last_decision();
  EXPECT_TRUE(dir_.read(b_ + "/build/x.o") == ref.object);
  EXPECT_EQ(dir_.read(b_ + "/build/x.o.d"), ref.depfile);
}

TEST_F(Relocation, WithoutBaseDirCheckoutsDoNotShare) {
  std::string line_a = std::string(LEXPACK_BIN) + " " + command(a_, map(a_));
  std::string line_b = std::string(LEXPACK_BIN) + " " + command(b_, map(b_));
  ASSERT_EQ(sh("cd " + a_ + "/build && " + line_a).exit_code, 0);
  EXPECT_TRUE(last_was_miss()) << last_decision();
  ASSERT_EQ(sh("cd " + b_ + "/build && " + line_b).exit_code, 0);
  EXPECT_TRUE(last_was_miss()) << last_decision();
}

TEST_F(Relocation, PathInAMacroValueIsNotRelocated) {
  // -D values reach the object as written: the key keeps them, no sharing.
  auto flags = [&](const std::string& c) { return map(c) + " -DROOT=\\\"" + checkout(c) + "\\\""; };
  build(a_, flags(a_));
  EXPECT_TRUE(last_was_miss()) << last_decision();
  std::string why = explain(b_, flags(b_));
  EXPECT_NE(why.find("not relocatable: the argument -DROOT="), std::string::npos) << why;
  build(b_, flags(b_));
  EXPECT_TRUE(last_was_miss()) << last_decision();
}

}  // namespace
}  // namespace lexpack::testing
