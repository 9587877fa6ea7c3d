// Fetched entries written into the local store: each one stored is served
// like a local hit (its record and every blob), and one that cannot be
// complete is left out without holding the others back.
#include "cache/remote/local_copy.h"

#include <gtest/gtest.h>

#include "tests/support/open_store.h"
#include "tests/support/test_dir.h"

namespace lexpack::cache::remote {
namespace {

RemoteEntry entry(const std::string& name) {
  RemoteEntry e;
  e.compile_time_us = 1000;
  e.payload = "payload of " + name;
  e.outputs.push_back({"object", "object bytes of " + name});
  e.outputs.push_back({"depfile", name + ".o: " + name + ".cpp\n"});
  e.err = name == "b" ? "warning from b\n" : "";
  return e;
}

TEST(LocalCopy, StoreEntriesWritesEachAsStoreEntryWould) {
  testing::TestDir tmp;
  const std::vector<Hash128> keys = {{1, 1}, {2, 2}, {3, 3}, {4, 4}};
  RemoteEntry empty_object = entry("d");
  empty_object.outputs[0].bytes.clear();  // an object with no bytes is no entry
  std::vector<std::optional<RemoteEntry>> got = {entry("a"), entry("b"), std::nullopt,
                                                 empty_object};
  {
    auto store = testing::open_store(tmp.path());
    ASSERT_TRUE(store);
    EXPECT_EQ(store_entries(*store, keys, got), (std::vector<bool>{true, true, false, false}));
  }
  // Read back through a store opened afresh, as a later compile would.
  auto store = testing::open_store(tmp.path());
  ASSERT_TRUE(store);
  for (size_t i : {size_t(0), size_t(1)}) {
    std::optional<ActionRecord> action = store->get_action(keys[i]);
    ASSERT_TRUE(action) << i;
    std::optional<RemoteEntry> back = entry_from_store(*store, *action);
    ASSERT_TRUE(back) << i;
    EXPECT_EQ(back->payload, got[i]->payload);
    EXPECT_EQ(back->compile_time_us, 1000u);
    EXPECT_EQ(back->err, got[i]->err);
    EXPECT_TRUE(back->out.empty());
    ASSERT_EQ(back->outputs.size(), 2u);
    EXPECT_EQ(back->outputs[0].role, "object");
    EXPECT_EQ(back->outputs[0].bytes, got[i]->outputs[0].bytes);
    EXPECT_EQ(back->outputs[1].bytes, got[i]->outputs[1].bytes);
    // The same record as the one-entry path writes.
    testing::TestDir other;
    auto single = testing::open_store(other.path());
    std::optional<ActionRecord> one = store_entry(*single, keys[i], *got[i]);
    ASSERT_TRUE(one);
    EXPECT_EQ(*one, *action);
  }
  EXPECT_FALSE(store->get_action(keys[2]));
  EXPECT_FALSE(store->get_action(keys[3]));
}

TEST(LocalCopy, StoreEntryGivesTheStoredRecordOrNothing) {
  testing::TestDir tmp;
  auto store = testing::open_store(tmp.path());
  ASSERT_TRUE(store);
  std::optional<ActionRecord> a = store_entry(*store, {1, 1}, entry("a"));
  ASSERT_TRUE(a);
  EXPECT_EQ(store->get_action(Hash128{1, 1}), a);
  std::optional<RemoteEntry> back = entry_from_store(*store, *a);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->outputs[0].bytes, "object bytes of a");
  EXPECT_TRUE(back->err.empty());
  RemoteEntry no_object = entry("d");
  no_object.outputs[0].bytes.clear();
  EXPECT_FALSE(store_entry(*store, {2, 2}, no_object));
  EXPECT_FALSE(store->get_action(Hash128{2, 2}));
}

TEST(LocalCopy, StoreEntriesWithNothingFetchedWritesNothing) {
  testing::TestDir tmp;
  auto store = testing::open_store(tmp.path());
  ASSERT_TRUE(store);
  EXPECT_EQ(store_entries(*store, {{1, 1}}, {std::nullopt}), std::vector<bool>{false});
  EXPECT_FALSE(store->get_action(Hash128{1, 1}));
}

}  // namespace
}  // namespace lexpack::cache::remote
