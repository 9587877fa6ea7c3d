// BatchingStore: held writes are visible to reads at once, reach the real
// store only when the batch is full or flushed, and none is lost on the way.
#include "cache/batching_store.h"

#include <gtest/gtest.h>

#include "cache/store.h"
#include "tests/support/open_store.h"
#include "tests/support/test_dir.h"

namespace lexpack::cache {
namespace {

TEST(BatchingStore, HeldWritesAreReadBackAndWrittenOnFlush) {
  testing::TestDir dir;
  auto inner = testing::open_store(dir.at("cache"));
  ASSERT_TRUE(inner);
  cache::BatchingStore batching(inner.get());
  base::Result<cache::BlobId> blob = batching.put_blob("summary bytes", {});
  ASSERT_TRUE(blob.ok());
  EXPECT_EQ(blob.value(), cache::hash_bytes("summary bytes"));
  cache::FileRecord rec{{1, 2, 3, 4, 5}, cache::hash_bytes("content"), blob.value()};
  ASSERT_TRUE(batching.put_file("/p/a.h", rec).ok());
  ASSERT_TRUE(batching.put_memo("scan", "tu", "memo").ok());

  // Held: the batching store answers, the real store does not know yet.
  EXPECT_EQ(batching.get_blob(blob.value()), "summary bytes");
  EXPECT_TRUE(batching.has_blob(blob.value()));
  EXPECT_EQ(batching.get_file("/p/a.h"), rec);
  EXPECT_EQ(batching.get_memo("scan", "tu"), "memo");
  EXPECT_FALSE(inner->get_blob(blob.value()));
  EXPECT_FALSE(inner->get_file("/p/a.h"));
  EXPECT_FALSE(inner->get_memo("scan", "tu"));

  ASSERT_TRUE(batching.flush().ok());
  EXPECT_EQ(inner->get_blob(blob.value()), "summary bytes");
  EXPECT_EQ(inner->get_file("/p/a.h"), rec);
  EXPECT_EQ(inner->get_memo("scan", "tu"), "memo");
  // Reads still work once nothing is held.
  EXPECT_EQ(batching.get_memo("scan", "tu"), "memo");
}

TEST(BatchingStore, WriteOutWritesWhatIsHeld) {
  testing::TestDir dir;
  auto inner = testing::open_store(dir.at("cache"));
  ASSERT_TRUE(inner);
  cache::BatchingStore batching(inner.get());
  base::Result<cache::BlobId> blob = batching.put_blob("summary bytes", {});
  ASSERT_TRUE(blob.ok());
  cache::FileRecord rec{{1, 2, 3, 4, 5}, cache::hash_bytes("content"), blob.value()};
  ASSERT_TRUE(batching.put_file("/p/a.h", rec).ok());
  EXPECT_FALSE(inner->get_file("/p/a.h"));
  ASSERT_TRUE(batching.write_out().ok());
  EXPECT_EQ(inner->get_blob(blob.value()), "summary bytes");
  EXPECT_EQ(inner->get_file("/p/a.h"), rec);
  // Held again after it, and written again.
  ASSERT_TRUE(batching.put_memo("scan", "tu", "memo").ok());
  EXPECT_FALSE(inner->get_memo("scan", "tu"));
  ASSERT_TRUE(batching.write_out().ok());
  EXPECT_EQ(inner->get_memo("scan", "tu"), "memo");
}

TEST(BatchingStore, WritesOutWhenFullAndOnDestruction) {
  testing::TestDir dir;
  auto inner = testing::open_store(dir.at("cache"));
  ASSERT_TRUE(inner);
  {
    cache::BatchingStore batching(inner.get(), /*max_items=*/3);
    ASSERT_TRUE(batching.put_memo("t", "1", "a").ok());
    ASSERT_TRUE(batching.put_memo("t", "2", "b").ok());
    EXPECT_FALSE(inner->get_memo("t", "1"));
    ASSERT_TRUE(batching.put_memo("t", "3", "c").ok());  // the third fills the batch
    EXPECT_EQ(inner->get_memo("t", "1"), "a");
    EXPECT_EQ(inner->get_memo("t", "3"), "c");
    ASSERT_TRUE(batching.put_memo("t", "4", "d").ok());
    EXPECT_FALSE(inner->get_memo("t", "4"));
  }
  EXPECT_EQ(inner->get_memo("t", "4"), "d");
  auto stats = inner->stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->memos, 4u);
}

TEST(BatchingStore, LaterPutOfTheSameKeyWins) {
  testing::TestDir dir;
  auto inner = testing::open_store(dir.at("cache"));
  ASSERT_TRUE(inner);
  cache::BatchingStore batching(inner.get());
  ASSERT_TRUE(batching.put_memo("t", "k", "old").ok());
  ASSERT_TRUE(batching.put_memo("t", "k", "new").ok());
  EXPECT_EQ(batching.get_memo("t", "k"), "new");
  ASSERT_TRUE(batching.flush().ok());
  EXPECT_EQ(inner->get_memo("t", "k"), "new");
}

// A view get_blob gave must stay valid after the blob is written out (the
// Store contract: valid for the life of the store).
TEST(BatchingStore, HeldBlobViewOutlivesAWriteOut) {
  testing::TestDir dir;
  auto inner = testing::open_store(dir.at("cache"));
  ASSERT_TRUE(inner);
  cache::BatchingStore batching(inner.get(), /*max_items=*/3);
  const std::string bytes(200, 'S');
  auto blob = batching.put_blob(bytes, {});
  ASSERT_TRUE(blob.ok());
  std::optional<std::string_view> view = batching.get_blob(blob.value());
  ASSERT_TRUE(view);
  ASSERT_TRUE(batching.put_memo("scan", "a", "1").ok());
  ASSERT_TRUE(batching.put_memo("scan", "b", "2").ok());  // the batch is full: written out
  EXPECT_EQ(inner->get_blob(blob.value()), bytes);
  std::vector<std::string> churn(32, std::string(200, 'Z'));
  EXPECT_EQ(*view, bytes);
}

}  // namespace
}  // namespace lexpack::cache
