// The bounded trust of the server's entries: a file is statted again only
// once its last stat is older than the interval, once for every entry
// resting on it, and a change then untrusts each entry that saw it before.
#include "server/stat_recheck.h"

#include <gtest/gtest.h>

#include "tests/support/test_dir.h"

namespace lexpack::server {
namespace {

using Clock = StatRecheck::Clock;

TEST(StatRecheck, AFileIsStattedAgainOnlyPastTheInterval) {
  testing::TestDir dir;
  dir.write("a.h", "1\n");
  dir.write("b.h", "1\n");
  base::StatSignature a, b;
  ASSERT_TRUE(base::stat_file(dir.at("a.h"), &a));
  ASSERT_TRUE(base::stat_file(dir.at("b.h"), &b));
  StatRecheck recheck;
  const Clock::time_point t0 = Clock::now();
  std::vector<StatRecheck::Ref> one{recheck.note(dir.at("a.h"), a, t0),
                                    recheck.note(dir.at("b.h"), b, t0)};
  std::vector<StatRecheck::Ref> two{recheck.note(dir.at("a.h"), a, t0)};
  EXPECT_EQ(recheck.size(), 2u);
  dir.write("a.h", "22\n");  // as a write no event told of
  Clock::time_point due;
  // Within the interval nothing is statted: the change is not seen yet.
  EXPECT_TRUE(recheck.still_same(one, t0 + StatRecheck::kInterval / 2, &due));
  EXPECT_EQ(due, t0 + StatRecheck::kInterval);
  // Past it, the first entry's look stats a.h and finds it changed; the
  // second entry sees that change without a stat of its own.
  EXPECT_FALSE(recheck.still_same(one, t0 + StatRecheck::kInterval, &due));
  EXPECT_FALSE(recheck.still_same(two, t0 + StatRecheck::kInterval, &due));
  // An entry checked after the change rests on the new signature.
  ASSERT_TRUE(base::stat_file(dir.at("a.h"), &a));
  const Clock::time_point t1 = t0 + 2 * StatRecheck::kInterval;
  std::vector<StatRecheck::Ref> three{recheck.note(dir.at("a.h"), a, t1)};
  EXPECT_TRUE(recheck.still_same(three, t1 + 2 * StatRecheck::kInterval, &due));
  // A file removed is a change too.
  dir.remove("a.h");
  EXPECT_FALSE(recheck.still_same(three, t1 + 4 * StatRecheck::kInterval, &due));
}

}  // namespace
}  // namespace lexpack::server
