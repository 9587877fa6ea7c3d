// A depfile whose paths were swapped for another checkout's, wrapped again,
// is byte for byte what the compiler writes in that checkout: checked
// against g++ and clang++-14 themselves.
#include "base/depfile_flow.h"

#include <gtest/gtest.h>

#include "base/process.h"
#include "tests/support/test_dir.h"

namespace lexpack::base {
namespace {

std::string depfile(const std::string& compiler, const std::string& top, const std::string& inc) {
  ProcessResult p = run_captured(
      {compiler, "-M", "-MT", "x.o", "-I" + top + "/" + inc, top + "/src/x.cpp"}, false);
  EXPECT_EQ(p.exit_code, 0) << p.err;
  return p.out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// `inc`: the folder of the headers, under each checkout.
void check(const std::string& compiler, DepfileFlow expected,
           const std::string& inc = "include/dir") {
  testing::TestDir dir;
  std::string a = dir.at("a"), b = dir.at("a-much-longer-checkout-directory/x");
  for (const std::string& top : {a, b}) {
    for (const char* h : {"one", "two", "three", "four", "five", "six"}) {
      dir.write(top.substr(dir.path().size() + 1) + "/" + inc + "/" + h + ".h", "#pragma once\n");
    }
    dir.write(top.substr(dir.path().size() + 1) + "/src/x.cpp",
              "#include \"one.h\"\n#include \"two.h\"\n#include \"three.h\"\n"
              "#include \"four.h\"\n#include \"five.h\"\n#include \"six.h\"\n#include <cstdio>\n");
  }
  std::string dep_a = depfile(compiler, a, inc), dep_b = depfile(compiler, b, inc);
  ASSERT_EQ(detect_depfile_flow(dep_a), expected) << dep_a;
  std::string moved = replace_all(dep_a, a, b);
  ASSERT_NE(moved, dep_b) << "the wrapping should differ for this test to mean anything";
  EXPECT_EQ(reflow_depfile(moved, expected), dep_b);
}

TEST(DepfileFlow, GccWrappingIsReproduced) {
  check("g++", DepfileFlow::kGcc);
}
TEST(DepfileFlow, ClangWrappingIsReproduced) {
  check("clang++-14", DepfileFlow::kClang);
}

// Names the compilers escape (a space is written `\ `) are kept as written.
TEST(DepfileFlow, EscapedNamesAreKeptAsWritten) {
  check("g++", DepfileFlow::kGcc, "include dir");
  check("clang++-14", DepfileFlow::kClang, "include dir");
}

TEST(DepfileFlow, UnknownLayoutIsLeftAlone) {
  std::string odd = "x.o:    a.h\n";
  EXPECT_EQ(detect_depfile_flow(odd), DepfileFlow::kNone);
  EXPECT_EQ(reflow_depfile(odd, DepfileFlow::kNone), odd);
}

}  // namespace
}  // namespace lexpack::base
