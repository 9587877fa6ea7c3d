// Eviction inside puts: when a full pack leaves the cache over its limit, each
// put does a bounded share of the eviction (one chunk with a zero budget) and
// later puts, in this process or another, go on until the cache fits.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "cache/store.h"
#include "tests/support/test_dir.h"

namespace lexpack::cache {
namespace {

// The most blobs one eviction chunk drops (see store_gc.cpp).
constexpr uint64_t kChunkBlobs = 64;

std::string random_bytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

StoreOptions options(const std::string& dir, bool auto_gc) {
  StoreOptions o;
  o.dir = dir;
  o.pack_size = 256 << 10;
  o.max_size = 1 << 20;
  o.auto_gc = auto_gc;
  o.auto_gc_budget_us = 0;
  o.keep_recent_seconds = -1;  // nothing is copied forward
  return o;
}

// Every stored blob reads back as its own bytes or not at all.
void expect_exact_or_absent(Store& store, const std::vector<std::string>& blobs, size_t* present) {
  *present = 0;
  for (const auto& b : blobs) {
    auto got = store.get_blob(hash_bytes(b));
    if (!got) continue;
    ASSERT_EQ(*got, b);
    ++*present;
  }
}

TEST(StoreGc, EvictionInAPutIsBoundedAndLaterPutsFinishIt) {
  testing::TestDir tmp;
  std::mt19937_64 rng(11);
  std::vector<std::string> blobs;
  {
    // About 3 MB of 500-byte blobs, three times the limit, without eviction.
    auto store = std::move(Store::open(options(tmp.path(), false)).value());
    for (int i = 0; i < 6000; ++i) {
      blobs.push_back(random_bytes(rng, 500));
      ASSERT_TRUE(store->put_blob(blobs.back()).ok());
    }
    ASSERT_GT(store->stats()->pack_bytes, 2u << 20);
  }
  auto store = std::move(Store::open(options(tmp.path(), true)).value());
  uint64_t steps = 0;
  bool fits = false;
  for (int i = 0; i < 3000 && !fits; ++i) {
    uint64_t before = store->stats()->blobs;
    blobs.push_back(random_bytes(rng, 500));
    ASSERT_TRUE(store->put_blob(blobs.back()).ok());
    auto after = store->stats();
    // One put drops at most one chunk of blobs, however far over the limit.
    ASSERT_LE(before + 1, after->blobs + kChunkBlobs) << "put " << i;
    if (after->blobs < before + 1) ++steps;
    fits = after->pack_bytes <= (1u << 20);
  }
  EXPECT_TRUE(fits) << "later puts did not finish the eviction";
  EXPECT_GT(steps, 10u) << "the eviction should take many puts with a zero budget";
  size_t present = 0;
  expect_exact_or_absent(*store, blobs, &present);
  EXPECT_GT(present, 0u);
  EXPECT_LT(present, blobs.size());
  auto v = store->verify();
  ASSERT_TRUE(v.ok()) << v.message();
  EXPECT_TRUE(v->clean());
}

TEST(StoreGc, AnUnfinishedEvictionGoesOnInTheNextProcessOrInGc) {
  testing::TestDir tmp;
  std::mt19937_64 rng(12);
  std::vector<std::string> blobs;
  {
    auto store = std::move(Store::open(options(tmp.path(), false)).value());
    for (int i = 0; i < 6000; ++i) {
      blobs.push_back(random_bytes(rng, 500));
      ASSERT_TRUE(store->put_blob(blobs.back()).ok());
    }
  }
  uint64_t blobs_left = 0;
  {
    // Puts until one starts an eviction; then this "process" ends.
    auto store = std::move(Store::open(options(tmp.path(), true)).value());
    for (int i = 0; i < 3000; ++i) {
      uint64_t before = store->stats()->blobs;
      blobs.push_back(random_bytes(rng, 500));
      ASSERT_TRUE(store->put_blob(blobs.back()).ok());
      blobs_left = store->stats()->blobs;
      if (blobs_left < before + 1) break;
    }
    ASSERT_GT(store->stats()->pack_bytes, 1u << 20) << "one zero-budget step evicted everything";
  }
  {
    // Another process's put takes the next chunk.
    auto store = std::move(Store::open(options(tmp.path(), true)).value());
    blobs.push_back(random_bytes(rng, 500));
    ASSERT_TRUE(store->put_blob(blobs.back()).ok());
    uint64_t now = store->stats()->blobs;
    EXPECT_LT(now, blobs_left + 1);
    EXPECT_GE(now + kChunkBlobs, blobs_left + 1);
    // gc finishes it at once; later puts then evict nothing.
    auto report = store->gc(1 << 20);
    ASSERT_TRUE(report.ok()) << report.message();
    EXPECT_LE(store->stats()->pack_bytes, 1u << 20);
    uint64_t settled = store->stats()->blobs;
    for (int i = 0; i < 20; ++i) {
      blobs.push_back(random_bytes(rng, 500));
      ASSERT_TRUE(store->put_blob(blobs.back()).ok());
    }
    EXPECT_EQ(store->stats()->blobs, settled + 20);
    size_t present = 0;
    expect_exact_or_absent(*store, blobs, &present);
    EXPECT_EQ(present, settled + 20);
  }
}

}  // namespace
}  // namespace lexpack::cache
