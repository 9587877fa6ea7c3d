// A precompiled header in two checkouts, as CMake's target_precompile_headers
// makes it: a generated header that includes the project's headers by
// absolute path, its .gch made in each checkout, and compiles that take it.
// The .gch is made again in the second checkout (it records that checkout's
// paths), and the compiles that take it hit the first checkout's entries,
// byte-identical to what the second checkout's compiler writes. Where the
// second checkout differs in anything the objects could show, they miss.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/launcher_fixture.h"
#include "tests/support/servers.h"

namespace lexpack::testing {
namespace {

class PchRelocation : public LauncherTest {
 protected:
  void SetUp() override {
    root_ = dir_.real_path();
    for (const std::string& c : {a_, b_}) write_checkout(c, "");
  }
  // `extra` goes into the generated header, after its includes.
  void write_checkout(const std::string& c, const std::string& extra) {
    dir_.write(c + "/inc/common.h",
               "#pragma once\n#include <vector>\n"
               "inline int common_v() { return 7; }\n");
    dir_.write(c + "/src/x.cpp",
               "#include <vector>\n#include \"common.h\"\n"
               "int f() { std::vector<int> v{common_v()}; return v[0] + int(__LINE__); }\n");
    // CMake's cmake_pch.hxx names the project's headers absolutely.
    dir_.write(c + "/build/pch.hxx", "#pragma GCC system_header\n#include <vector>\n#include \"" +
                                         checkout(c) + "/inc/common.h\"\n" + extra);
    dir_.write(c + "/build/pch.hxx.cxx", "/* generated */\n");
  }
  std::string checkout(const std::string& c) const { return root_ + "/" + c; }
  std::string flags(const std::string& c) const {
    return "-O2 " + debug_ + "-ffile-prefix-map=" + checkout(c) + "=. -I" + checkout(c) + "/inc";
  }
  // The two commands CMake writes: the .gch, then a compile that takes it.
  std::string make_pch(const std::string& c) const {
    return "g++ " + flags(c) + " -Winvalid-pch -x c++-header -include " + checkout(c) +
           "/build/pch.hxx -MD -MT pch.hxx.gch -MF pch.hxx.gch.d -o pch.hxx.gch -c " + checkout(c) +
           "/build/pch.hxx.cxx";
  }
  std::string take_pch(const std::string& c) const {
    return "g++ " + flags(c) + " -Winvalid-pch -include " + checkout(c) +
           "/build/pch.hxx -MD -MT x.o -MF x.o.d -o x.o -c " + checkout(c) + "/src/x.cpp";
  }
  base::ProcessResult run(const std::string& c, const std::string& line) {
    return sh("cd " + c + "/build && " + line, "LEXPACK_BASE_DIR=" + shell_quote(root_));
  }
  void through_lexpack(const std::string& c, const std::string& command) {
    base::ProcessResult p = run(c, std::string(LEXPACK_BIN) + " " + command);
    ASSERT_EQ(p.exit_code, 0) << p.err;
  }
  // What `c`'s own compiler writes for x.o with its own .gch.
  std::string plain_object(const std::string& c) {
    EXPECT_EQ(run(c, make_pch(c) + " && " + take_pch(c)).exit_code, 0);
    return dir_.read(c + "/build/x.o");
  }
  std::string explain(const std::string& c, const std::string& command) {
    return run(c, std::string(LEXPACK_BIN) + " explain " + command).out;
  }
  // A builds through lexpack; B makes its .gch through lexpack and takes it.
  // Whether B's take hit; its object in *object.
  bool second_checkout_hits(std::string* object) {
    through_lexpack(a_, make_pch(a_));
    EXPECT_TRUE(last_was_miss()) << last_decision();
    through_lexpack(a_, take_pch(a_));
    EXPECT_TRUE(last_was_miss()) << last_decision();
    through_lexpack(b_, make_pch(b_));
    // A .gch records its checkout's paths: never taken from another.
    EXPECT_TRUE(last_was_miss()) << last_decision();
    through_lexpack(b_, take_pch(b_));
    *object = dir_.read(b_ + "/build/x.o");
    return last_was_hit();
  }

  std::string root_;
  std::string a_ = "one/proj";
  std::string b_ = "other/checkout/proj";
  std::string debug_;
};

TEST_F(PchRelocation, TakersHitInAnotherCheckout) {
  const std::string ref = plain_object(b_);
  ASSERT_EQ(run(b_, "rm -f pch.hxx.gch x.o").exit_code, 0);
  std::string object;
  EXPECT_TRUE(second_checkout_hits(&object)) << last_decision();
  EXPECT_TRUE(object == ref);
  const std::string why = explain(b_, take_pch(b_));
  EXPECT_NE(why.find("relocatable: paths under"), std::string::npos) << why;
  EXPECT_NE(why.find("pch.hxx.gch: keyed by its maker"), std::string::npos) << why;
}

TEST_F(PchRelocation, WithDebugInfoTakersHitAndNameTheirOwnCheckout) {
  debug_ = "-g ";
  const std::string ref = plain_object(b_);
  ASSERT_EQ(run(b_, "rm -f pch.hxx.gch x.o").exit_code, 0);
  std::string object;
  EXPECT_TRUE(second_checkout_hits(&object)) << last_decision();
  EXPECT_TRUE(object == ref);
  EXPECT_EQ(object.find(checkout(a_)), std::string::npos);
}

// The generated header holds B's path in a string, not only in an include
// directive: that text reaches the object, so B must compile its own.
TEST_F(PchRelocation, APathOutsideAnIncludeDirectiveKeepsTheCheckoutsApart) {
  for (const std::string& c : {a_, b_}) {
    write_checkout(c, "inline const char* where() { return \"" + checkout(c) + "/inc\"; }\n");
  }
  const std::string ref = plain_object(b_);
  ASSERT_EQ(run(b_, "rm -f pch.hxx.gch x.o").exit_code, 0);
  std::string object;
  EXPECT_FALSE(second_checkout_hits(&object)) << last_decision();
  EXPECT_TRUE(object == ref);
}

// B's header includes another file than A's: the relocated names differ.
TEST_F(PchRelocation, AnotherIncludedFileMisses) {
  dir_.write(b_ + "/inc/other.h", "#pragma once\ninline int common_v() { return 8; }\n");
  dir_.write(b_ + "/build/pch.hxx", "#pragma GCC system_header\n#include <vector>\n#include \"" +
                                        checkout(b_) + "/inc/other.h\"\n");
  dir_.write(b_ + "/src/x.cpp",
             "#include <vector>\nint f() { std::vector<int> v{common_v()}; return v[0] + "
             "int(__LINE__); }\n");
  const std::string ref = plain_object(b_);
  ASSERT_EQ(run(b_, "rm -f pch.hxx.gch x.o").exit_code, 0);
  std::string object;
  EXPECT_FALSE(second_checkout_hits(&object)) << last_decision();
  EXPECT_TRUE(object == ref);
}

// A .gch lexpack did not make is known by its bytes alone: B's, made by the
// compiler directly, gives B's takers a key no entry of A's has.
TEST_F(PchRelocation, AGchMadeWithoutLexpackIsKeyedByItsBytes) {
  through_lexpack(a_, make_pch(a_));
  through_lexpack(a_, take_pch(a_));
  const std::string ref = plain_object(b_);
  ASSERT_EQ(run(b_, "rm -f x.o").exit_code, 0);
  through_lexpack(b_, take_pch(b_));
  EXPECT_TRUE(last_was_miss()) << last_decision();
  EXPECT_TRUE(dir_.read(b_ + "/build/x.o") == ref);
  const std::string why = explain(b_, take_pch(b_));
  EXPECT_NE(why.find("keyed by its bytes"), std::string::npos) << why;
}

// A .gch served from an entry this machine did not make (here: another
// machine at the same path, through a real Redis) is recorded with its maker
// when served, so that its takers hit too.
TEST_F(PchRelocation, AServedGchKeepsItsMaker) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  const std::string remote = "LEXPACK_REMOTE_STORAGE=" + shell_quote(redis.url());
  auto on = [&](const std::string& machine, const std::string& command) {
    base::ProcessResult p = run(a_, "LEXPACK_DIR=" + shell_quote(dir_.at(machine)) + " " + remote +
                                        " " + std::string(LEXPACK_BIN) + " " + command);
    ASSERT_EQ(p.exit_code, 0) << p.err;
  };
  on("first", make_pch(a_));
  on("first", take_pch(a_));
  const std::string object = dir_.read(a_ + "/build/x.o");
  ASSERT_EQ(run(a_, "rm -f pch.hxx.gch x.o").exit_code, 0);
  on("second", make_pch(a_));
  EXPECT_TRUE(last_was_hit()) << last_decision();
  on("second", take_pch(a_));
  EXPECT_TRUE(last_was_hit()) << last_decision();
  EXPECT_TRUE(dir_.read(a_ + "/build/x.o") == object);
}

}  // namespace
}  // namespace lexpack::testing
