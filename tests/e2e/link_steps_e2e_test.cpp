// The archive steps of one ninja edge run by one launcher: CMake's
// ": && cmake -E rm -f lib.a && ar qc lib.a ... && ranlib lib.a && :" is
// handed by the plugin to a single `lexpack --link-steps`, which must do what
// the shell did with one launcher per step: the same archive, each step
// cached, the first step that fails ending the chain with its status.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>

#include "base/process.h"
#include "tests/support/summary_counts.h"
#include "tests/support/test_dir.h"

namespace lexpack::testing {
namespace {

class LinkStepsE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.write("a.cpp", "int a() { return 1; }\n");
    dir_.write("b.cpp", "int b() { return 2; }\n");
    dir_.write("build.ninja",
               "rule cc\n  command = g++ -O1 -c $in -o $out\n"
               "rule ar\n  command = : && cmake -E rm -f $out && ar qc $out $in && "
               "ranlib $out && :\n"
               "build a.o: cc a.cpp\nbuild b.o: cc b.cpp\n"
               "build libab.a: ar a.o b.o\n");
  }

  base::ProcessResult sh(const std::string& command) {
    std::string env = "LEXPACK_DIR=" + shell_quote(dir_.at("cache")) +
                      " LEXPACK_LOGFILE=" + shell_quote(dir_.at("log.txt")) +
                      " LEXPACK_PLUGIN=" + shell_quote(LEXPACK_PLUGIN_SO);
    return shell_in(dir_, env, command);
  }

  // The launcher processes that wrote the log's lines about the archive.
  std::set<std::string> archive_launchers() {
    std::set<std::string> pids;
    std::istringstream in(dir_.read("log.txt"));
    for (std::string line; std::getline(in, line);) {
      if (line.find(" libab.a: ") == std::string::npos) continue;
      pids.insert(line.substr(0, line.find(']')));
    }
    return pids;
  }

  TestDir dir_;
};

TEST_F(LinkStepsE2eTest, OneLauncherRunsTheChainAndCachesEachStep) {
  ASSERT_EQ(sh("ninja >/dev/null && cp libab.a plain.a && ninja -t clean >/dev/null").exit_code, 0);
  dir_.write("log.txt", "");
  base::ProcessResult cold = sh(std::string(LEXPACK_BIN) + " ninja");
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_EQ(summary_counts(cold.err, "archive/link step")["misses"], 2) << cold.err;  // ar, ranlib
  EXPECT_EQ(archive_launchers().size(), 1u) << dir_.read("log.txt");
  EXPECT_EQ(dir_.read("libab.a"), dir_.read("plain.a"));
  ASSERT_EQ(sh("ninja -t clean >/dev/null").exit_code, 0);
  base::ProcessResult warm = sh(std::string(LEXPACK_BIN) + " ninja");
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_EQ(summary_counts(warm.err, "archive/link step")["hits"], 2) << warm.err;
  EXPECT_EQ(dir_.read("libab.a"), dir_.read("plain.a"));
}

TEST_F(LinkStepsE2eTest, TheFirstStepThatFailsEndsTheChainWithItsStatus) {
  const std::string lexpack = LEXPACK_BIN;
  base::ProcessResult failed =
      sh(lexpack + " --link-steps ar qc x.a missing.o \\&\\& touch after.txt");
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_NE(failed.err.find("missing.o"), std::string::npos) << failed.err;  // ar's own words
  EXPECT_FALSE(dir_.exists("after.txt"));
  base::ProcessResult ran =
      sh(lexpack + " --link-steps cmake -E rm -f x.a \\&\\& touch after.txt \\&\\& sh -c 'exit 7'");
  EXPECT_EQ(ran.exit_code, 7);
  EXPECT_TRUE(dir_.exists("after.txt"));  // a command that is no step runs as it is
}

// A failing step under ninja: the edge fails with the tool's message, and
// the steps after it do not run.
TEST_F(LinkStepsE2eTest, AFailingArchiveFailsTheEdge) {
  dir_.write("build.ninja",
             "rule ar\n  command = : && cmake -E rm -f $out && ar qc $out $in && "
             "ranlib $out && :\n"
             "build libab.a: ar missing.o\n"
             "build missing.o: phony\n");
  base::ProcessResult r = sh(std::string(LEXPACK_BIN) + " ninja");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE((r.out + r.err).find("missing.o"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace lexpack::testing
