// The file clock's start of a step: a file written just before it, its times
// read (which makes a kernel with multigrain timestamps stamp the next write
// with the fine clock), is stamped before the start; a file written after
// it, at or after.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "base/file_stat.h"
#include "tests/support/test_dir.h"

namespace lexpack::testing {
namespace {

int64_t stamp(const base::StatSignature& s) {
  return std::max(s.mtime_ns, s.ctime_ns);
}

TEST(FileClock, AFileWrittenJustBeforeTheStartIsStampedBeforeIt) {
  TestDir dir;
  const std::string path = dir.at("f.txt");
  int ahead = 0;  // writes stamped past the coarse clock read just after
  for (int i = 0; i < 200; ++i) {
    base::StatSignature sig;
    dir.write("f.txt", std::to_string(i));
    ASSERT_TRUE(base::stat_file(path, &sig));  // times read: the next write may be fine-grained
    dir.write("f.txt", std::to_string(i) + "!");
    const int64_t coarse = base::file_clock_ns();
    const int64_t start = base::next_file_clock_tick_ns();
    ASSERT_TRUE(base::stat_file(path, &sig));
    if (stamp(sig) >= coarse) ++ahead;
    ASSERT_LT(stamp(sig), start) << "write " << i;
    dir.write("f.txt", "after " + std::to_string(i));
    ASSERT_TRUE(base::stat_file(path, &sig));
    ASSERT_GE(stamp(sig), start) << "write " << i;
  }
  // How often the kernel stamped ahead of the coarse clock (0 on a kernel
  // without multigrain timestamps).
  RecordProperty("stamped_ahead_of_coarse_clock", ahead);
}

}  // namespace
}  // namespace lexpack::testing
