// The stat answers one request about many compiles shares between its
// checks: kept while nothing was heard, dropped once an event was read (a
// drain may have untrusted only the entries depending on the path then, not
// the one checked next), however that event was consumed.
#include <gtest/gtest.h>

#include "server/server_state.h"
#include "server/watch_table.h"
#include "tests/support/test_dir.h"

namespace lexpack::server {
namespace {

TEST(SharedStats, AnswersAreKeptUntilAnEventIsRead) {
  testing::TestDir dir;
  dir.write("inc/a.h", "1\n");
  WatchTable table;
  ASSERT_TRUE(table.open());
  table.begin_pass({1, 1});
  ASSERT_TRUE(table.watch_path(dir.at("inc/a.h")));
  SharedStats stats;
  base::StatSignature first, again;
  stats.start_check(dir.path(), table.events_read());
  ASSERT_TRUE(stats.stat_file("inc/a.h", &first));  // relative to the check's directory
  dir.write("inc/a.h", "22\n");
  // The same epoch: the answer taken before is given again.
  ASSERT_TRUE(stats.stat_file(dir.at("inc/a.h"), &again));
  EXPECT_TRUE(again == first);
  // A drain reads the event (and fires entry 1, the only one depending on
  // it); a later check must not see the old answer.
  bool drop = false;
  table.drain([](TrustRef) {}, &drop);
  stats.start_check(dir.path(), table.events_read());
  ASSERT_TRUE(stats.stat_file("inc/a.h", &again));
  EXPECT_FALSE(again == first);
  EXPECT_EQ(again.size, 3u);
  // An event no entry depends on any more counts as well.
  const uint64_t read = table.events_read();
  dir.write("inc/a.h", "333\n");
  table.drain([](TrustRef) { ADD_FAILURE() << "no entry depends on it now"; }, &drop);
  EXPECT_GT(table.events_read(), read);
}

}  // namespace
}  // namespace lexpack::server
