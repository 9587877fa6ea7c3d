// End to end: `lexpack export --working-set` after a `lexpack ninja` build
// writes only what that build used, and importing it into an empty cache makes
// a rebuild from a wiped build directory all hits.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "base/process.h"
#include "tests/support/test_dir.h"

namespace lexpack::testing {
namespace {

void write_project(const TestDir& dir) {
  dir.write("src/CMakeLists.txt",
            "cmake_minimum_required(VERSION 3.22)\n"
            "project(ws CXX)\n"
            "add_library(parts STATIC t0.cpp t1.cpp t2.cpp)\n"
            "target_include_directories(parts PUBLIC include)\n");
  dir.write("src/include/common.h", "#pragma once\n#include <string>\n#include <vector>\n");
  for (int i = 0; i < 3; ++i) {
    dir.write("src/t" + std::to_string(i) + ".cpp",
              "#include \"common.h\"\nint t" + std::to_string(i) +
                  "() { std::vector<std::string> v(" + std::to_string(i + 2) +
                  "); return int(v.size()); }\n");
  }
}

class WorkingSetTest : public ::testing::Test {
 protected:
  void SetUp() override { write_project(dir_); }

  // Runs `command` in the test directory with the cache `cache`.
  base::ProcessResult sh(const std::string& cache, const std::string& command) {
    return base::run_captured(
        {"/bin/sh", "-c",
         "cd " + shell_quote(dir_.path()) +
             " || exit 99; export LEXPACK_DIR=" + shell_quote(dir_.at(cache)) +
             " LEXPACK_PLUGIN=" + shell_quote(LEXPACK_PLUGIN_SO) + "; " + command},
        true);
  }
  // A fresh build directory `build` with `flags`, built by `lexpack ninja`.
  base::ProcessResult build(const std::string& cache, const std::string& build,
                            const std::string& flags) {
    base::ProcessResult c =
        sh(cache, "rm -rf " + build + " && cmake -S src -B " + build +
                      " -G Ninja -DCMAKE_CXX_COMPILER=g++ -DCMAKE_CXX_FLAGS=" + shell_quote(flags) +
                      " >/dev/null");
    EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
    return sh(cache, std::string(LEXPACK_BIN) + " ninja -C " + build);
  }
  uint64_t size_of(const std::string& file) {
    std::error_code ec;
    return std::filesystem::file_size(dir_.at(file), ec);
  }

  TestDir dir_;
};

TEST_F(WorkingSetTest, ImportedWorkingSetMakesTheRebuildAllHits) {
  // Other entries in the cache: the same project with other flags.
  base::ProcessResult other = build("cache", "b-other", "-O2 -DOTHER=1");
  ASSERT_EQ(other.exit_code, 0) << other.out << other.err;
  base::ProcessResult first = build("cache", "b", "-O1");
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_NE(first.err.find("3 compiles, 0 hits"), std::string::npos) << first.err;

  // A build that compiles nothing keeps the record of the last real one.
  base::ProcessResult noop = sh("cache", std::string(LEXPACK_BIN) + " ninja -C b");
  ASSERT_EQ(noop.exit_code, 0) << noop.out << noop.err;

  base::ProcessResult ws = sh("cache", std::string(LEXPACK_BIN) + " export --working-set ws.lxa");
  ASSERT_EQ(ws.exit_code, 0) << ws.out << ws.err;
  EXPECT_NE(ws.out.find(": 3 actions,"), std::string::npos) << ws.out;
  base::ProcessResult full = sh("cache", std::string(LEXPACK_BIN) + " export full.lxa");
  ASSERT_EQ(full.exit_code, 0) << full.out << full.err;
  EXPECT_GT(size_of("ws.lxa"), 0u);
  EXPECT_LT(size_of("ws.lxa") * 3 / 2, size_of("full.lxa"))
      << "working set " << size_of("ws.lxa") << " bytes, full " << size_of("full.lxa");

  base::ProcessResult imported = sh("fresh", std::string(LEXPACK_BIN) + " import ws.lxa");
  ASSERT_EQ(imported.exit_code, 0) << imported.out << imported.err;
  EXPECT_NE(imported.out.find("3 actions"), std::string::npos) << imported.out;
  base::ProcessResult rebuilt = build("fresh", "b", "-O1");
  ASSERT_EQ(rebuilt.exit_code, 0) << rebuilt.out << rebuilt.err;
  EXPECT_NE(rebuilt.err.find("3 compiles, 3 hits"), std::string::npos) << rebuilt.err;

  // The other configuration was not in the working set.
  base::ProcessResult missed = build("fresh", "b-other", "-O2 -DOTHER=1");
  ASSERT_EQ(missed.exit_code, 0) << missed.out << missed.err;
  EXPECT_NE(missed.err.find("3 compiles, 0 hits"), std::string::npos) << missed.err;
}

// Two build directories with one cache: each keeps its own working set, and
// -C picks it whichever was built last.
TEST_F(WorkingSetTest, EachBuildDirectoryKeepsItsWorkingSet) {
  ASSERT_EQ(build("cache", "b", "-O1").exit_code, 0);
  ASSERT_EQ(build("cache", "b-other", "-O2 -DOTHER=1").exit_code, 0);
  const std::string export_ws = std::string(LEXPACK_BIN) + " export --working-set ";

  base::ProcessResult last = sh("cache", export_ws + "last.lxa");
  ASSERT_EQ(last.exit_code, 0) << last.out << last.err;
  EXPECT_NE(last.out.find("of the last build of " + dir_.at("b-other") + ": 3 actions"),
            std::string::npos)
      << last.out;

  base::ProcessResult ws = sh("cache", export_ws + "-C b ws.lxa");
  ASSERT_EQ(ws.exit_code, 0) << ws.out << ws.err;
  EXPECT_NE(ws.out.find("of the last build of " + dir_.at("b") + ": 3 actions"), std::string::npos)
      << ws.out;
  ASSERT_EQ(sh("fresh", std::string(LEXPACK_BIN) + " import ws.lxa").exit_code, 0);
  base::ProcessResult rebuilt = build("fresh", "b", "-O1");
  ASSERT_EQ(rebuilt.exit_code, 0) << rebuilt.out << rebuilt.err;
  EXPECT_NE(rebuilt.err.find("3 compiles, 3 hits"), std::string::npos) << rebuilt.err;

  base::ProcessResult none = sh("cache", export_ws + "-C src none.lxa");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no build of " + dir_.at("src")), std::string::npos) << none.err;
}

TEST_F(WorkingSetTest, NoBuildYetIsAClearError) {
  base::ProcessResult ws = sh("cache", std::string(LEXPACK_BIN) + " export --working-set ws.lxa");
  EXPECT_EQ(ws.exit_code, 1);
  EXPECT_NE(ws.err.find("lexpack: error: "), std::string::npos) << ws.err;
  EXPECT_NE(ws.err.find("last.keys"), std::string::npos) << ws.err;
}

}  // namespace
}  // namespace lexpack::testing
