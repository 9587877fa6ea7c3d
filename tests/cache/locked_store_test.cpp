// LockedStore: worker threads share one store; a memo is handed to its reader
// outside the lock, so a reader may ask the store again from inside.
#include "cache/locked_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "cache/batching_store.h"
#include "cache/store.h"
#include "tests/support/open_store.h"
#include "tests/support/test_dir.h"

namespace lexpack::cache {
namespace {

TEST(LockedStore, VisitsHeldAndWrittenMemos) {
  testing::TestDir dir;
  auto inner = testing::open_store(dir.at("cache"));
  ASSERT_TRUE(inner);
  ASSERT_TRUE(inner->put_memo("scan", "written", std::string(100000, 'w')).ok());
  BatchingStore batching(inner.get());
  LockedStore locked(&batching);
  ASSERT_TRUE(locked.put_memo("scan", "held", "held value").ok());

  std::string seen;
  EXPECT_TRUE(locked.visit_memo("scan", "held", [&](std::string_view v) { seen = v; }));
  EXPECT_EQ(seen, "held value");
  EXPECT_TRUE(locked.visit_memo("scan", "written", [&](std::string_view v) { seen = v; }));
  EXPECT_EQ(seen, std::string(100000, 'w'));
  // A shorter memo after a longer one: only its own bytes.
  EXPECT_TRUE(locked.visit_memo("scan", "held", [&](std::string_view v) { seen = v; }));
  EXPECT_EQ(seen, "held value");
  bool called = false;
  EXPECT_FALSE(locked.visit_memo("scan", "none", [&](std::string_view) { called = true; }));
  EXPECT_FALSE(called);
}

TEST(LockedStore, AReaderMayAskAgainFromInside) {
  testing::TestDir dir;
  auto inner = testing::open_store(dir.at("cache"));
  ASSERT_TRUE(inner);
  LockedStore locked(inner.get());
  ASSERT_TRUE(locked.put_memo("scan", "outer", "outer value").ok());
  ASSERT_TRUE(locked.put_memo("scan", "inner", "inner value").ok());
  std::string outer_seen, inner_seen, outer_after;
  EXPECT_TRUE(locked.visit_memo("scan", "outer", [&](std::string_view outer) {
    outer_seen = outer;
    // Neither a deadlock (the lock is not held here) nor the outer value
    // overwritten by the inner one.
    EXPECT_TRUE(locked.visit_memo("scan", "inner", [&](std::string_view v) { inner_seen = v; }));
    outer_after = outer;
  }));
  EXPECT_EQ(outer_seen, "outer value");
  EXPECT_EQ(inner_seen, "inner value");
  EXPECT_EQ(outer_after, "outer value");
}

TEST(LockedStore, ThreadsVisitWhileOthersWrite) {
  testing::TestDir dir;
  auto inner = testing::open_store(dir.at("cache"));
  ASSERT_TRUE(inner);
  BatchingStore batching(inner.get(), /*max_items=*/8);
  LockedStore locked(&batching);
  constexpr int kKeys = 200;
  auto value_of = [](int k) { return std::string(size_t(100 + k * 37), char('a' + k % 26)); };
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int k = t; k < kKeys; k += 2) {
        EXPECT_TRUE(locked.put_memo("scan", std::to_string(k), value_of(k)).ok());
      }
    });
    threads.emplace_back([&] {
      for (int round = 0; round < 5; ++round) {
        for (int k = 0; k < kKeys; ++k) {
          locked.visit_memo("scan", std::to_string(k), [&](std::string_view v) {
            if (v != value_of(k)) ++wrong;
          });
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  for (int k = 0; k < kKeys; ++k) {
    std::string seen;
    EXPECT_TRUE(
        locked.visit_memo("scan", std::to_string(k), [&](std::string_view v) { seen = v; }));
    EXPECT_EQ(seen, value_of(k));
  }
}

}  // namespace
}  // namespace lexpack::cache
