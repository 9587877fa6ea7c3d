// BatchingStore: held writes are visible to reads at once, reach the real
// store only when the batch is full or flushed, and none is lost on the way.
#include "cache/batching_store.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "cache/store.h"
#include "tests/support/open_store.h"
#include "tests/support/test_dir.h"

namespace lexpack::cache {
namespace {

// A batching store over a new store, holding a summary's blob and the file
// record of /p/a.h that names it.
class BatchingStoreHolding : public ::testing::Test {
 protected:
  void SetUp() override {
    inner_ = testing::open_store(dir_.at("cache"));
    ASSERT_TRUE(inner_);
    batching_.emplace(inner_.get());
    base::Result<cache::BlobId> put = batching_->put_blob("summary bytes", {});
    ASSERT_TRUE(put.ok());
    blob_ = put.value();
    rec_ = {{1, 2, 3, 4, 5}, cache::hash_bytes("content"), blob_};
    ASSERT_TRUE(batching_->put_file("/p/a.h", rec_).ok());
  }
  testing::TestDir dir_;
  std::unique_ptr<cache::Store> inner_;
  std::optional<cache::BatchingStore> batching_;
  cache::BlobId blob_;
  cache::FileRecord rec_;
};

TEST_F(BatchingStoreHolding, HeldWritesAreReadBackAndWrittenOnFlush) {
  cache::BatchingStore& batching = *batching_;
  EXPECT_EQ(blob_, cache::hash_bytes("summary bytes"));
  ASSERT_TRUE(batching.put_memo("scan", "tu", "memo").ok());

  // Held: the batching store answers, the real store does not know yet.
  EXPECT_EQ(batching.get_blob(blob_), "summary bytes");
  EXPECT_TRUE(batching.has_blob(blob_));
  EXPECT_EQ(batching.get_file("/p/a.h"), rec_);
  EXPECT_EQ(batching.get_memo("scan", "tu"), "memo");
  EXPECT_FALSE(inner_->get_blob(blob_));
  EXPECT_FALSE(inner_->get_file("/p/a.h"));
  EXPECT_FALSE(inner_->get_memo("scan", "tu"));

  ASSERT_TRUE(batching.flush().ok());
  EXPECT_EQ(inner_->get_blob(blob_), "summary bytes");
  EXPECT_EQ(inner_->get_file("/p/a.h"), rec_);
  EXPECT_EQ(inner_->get_memo("scan", "tu"), "memo");
  // Reads still work once nothing is held.
  EXPECT_EQ(batching.get_memo("scan", "tu"), "memo");
}

TEST_F(BatchingStoreHolding, WriteOutWritesWhatIsHeld) {
  cache::BatchingStore& batching = *batching_;
  EXPECT_FALSE(inner_->get_file("/p/a.h"));
  ASSERT_TRUE(batching.write_out().ok());
  EXPECT_EQ(inner_->get_blob(blob_), "summary bytes");
  EXPECT_EQ(inner_->get_file("/p/a.h"), rec_);
  // Held again after it, and written again.
  ASSERT_TRUE(batching.put_memo("scan", "tu", "memo").ok());
  EXPECT_FALSE(inner_->get_memo("scan", "tu"));
  ASSERT_TRUE(batching.write_out().ok());
  EXPECT_EQ(inner_->get_memo("scan", "tu"), "memo");
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
