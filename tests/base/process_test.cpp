// run_captured: both streams captured, the exit code, and the two times it
// measures: the wall time, and the CPU time of the program with the
// descendants it waited for (a sleeping program costs wall time, no CPU).
#include "base/process.h"

#include <gtest/gtest.h>

namespace lexpack::base {
namespace {

// A shell loop that keeps one core busy for a while.
const char* kBusy = "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done";

TEST(RunCaptured, StreamsAndExitCode) {
  ProcessResult r = run_captured({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, true);
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.exit_code, 3);
}

TEST(RunCaptured, SleepingCostsWallTimeNotCpu) {
  ProcessResult r = run_captured({"/bin/sh", "-c", "sleep 0.5"}, true);
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_GE(r.elapsed_us, 500000u);
  EXPECT_LT(r.cpu_us, 200000u);
}

TEST(RunCaptured, CpuTimeCountsDescendants) {
  // The work happens in a grandchild, as cc1plus runs under the gcc driver.
  ProcessResult r =
      run_captured({"/bin/sh", "-c", std::string("/bin/sh -c '") + kBusy + "'; exit 0"}, true);
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_GE(r.cpu_us, 50000u) << "elapsed " << r.elapsed_us;
  EXPECT_LE(r.cpu_us, r.elapsed_us + 20000) << "one core at a time";
}

}  // namespace
}  // namespace lexpack::base
