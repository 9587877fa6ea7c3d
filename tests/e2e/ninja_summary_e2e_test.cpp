// The line `lexpack ninja` prints after a build counts that build only:
// compiles of another build on the same cache at the same time are not its
// own, and hits from a read-only cache are hits.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "base/process.h"
#include "tests/support/test_dir.h"

namespace lexpack::testing {
namespace {

class NinjaSummaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    real_ = base::find_program("g++");
    if (real_.empty() || base::find_program("ninja").empty()) GTEST_SKIP() << "needs g++ and ninja";
    dir_.write("a/build.ninja", "rule cxx\n  command = g++ -c $in -o $out\nbuild x.o: cxx x.cpp\n");
    dir_.write("a/x.cpp", "int x() { return 1; }\n");
    for (int i = 1; i <= 3; ++i) {
      dir_.write("b/y" + std::to_string(i) + ".cpp",
                 "int y" + std::to_string(i) + "() { return " + std::to_string(i) + "; }\n");
    }
    // A g++ that, for a build started with HOLD set, says it started and then
    // waits for "go" before compiling.
    dir_.write("wrap/g++",
               "#!/bin/sh\n"
               "if [ -n \"$HOLD\" ]; then case \" $* \" in *\" -c \"*)\n"
               "  touch \"$HOLD/started\"\n"
               "  while [ ! -e \"$HOLD/go\" ]; do sleep 0.05; done;;\n"
               "esac; fi\n"
               "exec " +
                   real_ + " \"$@\"\n");
    ASSERT_EQ(::chmod(dir_.at("wrap/g++").c_str(), 0755), 0);
  }
  base::ProcessResult sh(const std::string& command) {
    std::string env = "LEXPACK_DIR=" + shell_quote(dir_.at("cache")) +
                      " LEXPACK_LOGFILE=" + shell_quote(dir_.at("log.txt")) +
                      " LEXPACK_PLUGIN=" + shell_quote(LEXPACK_PLUGIN_SO) +
                      " PATH=" + shell_quote(dir_.at("wrap")) +
                      ":$PATH LEXPACK=" + shell_quote(LEXPACK_BIN);
    return base::run_captured(
        {"/bin/sh", "-c",
         "cd " + shell_quote(dir_.path()) + " || exit 99; export " + env + "; " + command},
        true);
  }
  static std::string summary_line(const std::string& err) {
    size_t at = err.rfind("lexpack: ");
    return at == std::string::npos ? "" : err.substr(at, err.find('\n', at) - at);
  }
  std::string real_;
  TestDir dir_;
};

TEST_F(NinjaSummaryTest, ConcurrentCompilesOnTheSameCacheAreNotCounted) {
  // Build a holds its one compile while three compiles of b use the cache.
  base::ProcessResult r =
      sh("HOLD=$PWD/a \"$LEXPACK\" ninja -C a >a.log 2>&1 & pid=$!\n"
         "i=0; while [ ! -e a/started ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n"
         "(cd b && for n in 1 2 3; do \"$LEXPACK\" g++ -c y$n.cpp -o y$n.o || exit 1; done) || "
         "exit 1\n"
         "touch a/go\n"
         "wait $pid; rc=$?; cat a.log >&2; exit $rc\n");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(summary_line(r.err).rfind("lexpack: 1 compile, 0 hits, 1 miss,", 0), 0u) << r.err;
}

TEST_F(NinjaSummaryTest, HitsFromAReadOnlyCacheAreCounted) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the second build as another user";
  base::ProcessResult warm = sh("\"$LEXPACK\" ninja -C a && ninja -C a -t clean");
  ASSERT_EQ(warm.exit_code, 0) << warm.out << warm.err;
  // Another user: the cache (root's, 0755) is read-only to them.
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
  base::ProcessResult r =
      sh("chown -R 4243:4243 a wrap && touch log.txt && chown 4243 log.txt && "
         "setpriv --reuid=4243 --regid=4243 --clear-groups \"$LEXPACK\" ninja -C a");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(summary_line(r.err).rfind("lexpack: 1 compile, 1 hit, 0 misses,", 0), 0u) << r.err;
}

}  // namespace
}  // namespace lexpack::testing
