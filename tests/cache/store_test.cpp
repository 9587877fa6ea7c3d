// Store basics on real files: blob round trips, dedup, reopen, rollover over
// many packs, page alignment, records, counters, stats, gc, clear, export/import.
#include "cache/store.h"
#include "cache/archive/archive.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "tests/support/test_dir.h"

namespace lexpack::cache {
namespace {

std::unique_ptr<Store> open_store(const std::string& dir, uint64_t pack_size = 0) {
  StoreOptions o;
  o.dir = dir;
  o.pack_size = pack_size;
  auto s = Store::open(o);
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok() ? std::move(s.value()) : nullptr;
}

std::string random_bytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

size_t count_files(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

TEST(Store, BlobRoundTripAndDedup) {
  testing::TestDir tmp;
  auto store = open_store(tmp.path());
  ASSERT_TRUE(store);
  auto id = store->put_blob("hello world");
  ASSERT_TRUE(id.ok()) << id.message();
  EXPECT_EQ(id.value(), hash_bytes("hello world"));
  auto got = store->get_blob(id.value());
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, "hello world");
  EXPECT_TRUE(store->has_blob(id.value()));
  EXPECT_FALSE(store->has_blob(hash_bytes("other")));
  EXPECT_FALSE(store->get_blob(hash_bytes("other")));

  auto stats1 = store->stats();
  ASSERT_TRUE(stats1.ok());
  auto again = store->put_blob("hello world");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value(), id.value());
  auto stats2 = store->stats();
  EXPECT_EQ(stats2->blobs, 1u);
  EXPECT_EQ(stats2->pack_bytes, stats1->pack_bytes);  // nothing new written

  auto empty = store->put_blob("");
  ASSERT_TRUE(empty.ok());
  auto got_empty = store->get_blob(empty.value());
  ASSERT_TRUE(got_empty);
  EXPECT_TRUE(got_empty->empty());
}

TEST(Store, ReopenKeepsEverything) {
  testing::TestDir tmp;
  std::mt19937_64 rng(1);
  std::vector<std::string> blobs;
  ActionRecord action;
  action.outputs.push_back({"object", hash_bytes("obj")});
  action.exit_code = 3;
  action.stdout_blob = hash_bytes("out");
  action.payload = std::string("\0deps\xff", 6);
  action.compile_time_us = 12345;
  FileRecord file{{1, 2, 3, 4, 5}, hash_bytes("content"), hash_bytes("scan")};
  {
    auto store = open_store(tmp.path());
    for (int i = 0; i < 200; ++i) {
      blobs.push_back(random_bytes(rng, rng() % 5000));
      ASSERT_TRUE(store->put_blob(blobs.back()).ok());
    }
    ASSERT_TRUE(store->put_action(hash_bytes("key"), action).ok());
    ASSERT_TRUE(store->put_file("/src/a.cpp", file).ok());
    ASSERT_TRUE(store->put_memo("closure", "tu", "value bytes").ok());
    ASSERT_TRUE(store->add_counter("hits", 2).ok());
    ASSERT_TRUE(store->add_counter("hits", 3).ok());
  }
  auto store = open_store(tmp.path());
  for (const auto& b : blobs) {
    auto got = store->get_blob(hash_bytes(b));
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, b);
  }
  auto a = store->get_action(hash_bytes("key"));
  ASSERT_TRUE(a);
  EXPECT_EQ(*a, action);
  EXPECT_FALSE(store->get_action(hash_bytes("nokey")));
  auto f = store->get_file("/src/a.cpp");
  ASSERT_TRUE(f);
  EXPECT_EQ(*f, file);
  EXPECT_FALSE(store->get_file("/src/b.cpp"));
  EXPECT_EQ(store->get_memo("closure", "tu"), "value bytes");
  EXPECT_FALSE(store->get_memo("closure2", "tu"));
  auto stats = store->stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->counters["hits"], 5);
  EXPECT_EQ(stats->blobs, blobs.size());
  EXPECT_EQ(stats->actions, 1u);
  EXPECT_EQ(stats->files, 1u);
  EXPECT_EQ(stats->memos, 1u);
}

TEST(Store, PutRecordsWritesFilesAndMemosTogether) {
  testing::TestDir tmp;
  FileRecord a{{1, 2, 3, 4, 5}, hash_bytes("a"), hash_bytes("scan a")};
  FileRecord b{{6, 7, 8, 9, 10}, hash_bytes("b"), {}};
  {
    auto store = open_store(tmp.path());
    ASSERT_TRUE(store->put_file("/src/b.h", FileRecord{}).ok());
    ASSERT_TRUE(store
                    ->put_records({{"/src/a.h", a}, {"/src/b.h", b}},
                                  {{"scan", "tu1", "one"}, {"scan", "tu2", std::string(3, '\0')}})
                    .ok());
  }
  auto store = open_store(tmp.path());
  EXPECT_EQ(store->get_file("/src/a.h"), a);
  EXPECT_EQ(store->get_file("/src/b.h"), b);  // replaced
  EXPECT_EQ(store->get_memo("scan", "tu1"), "one");
  EXPECT_EQ(store->get_memo("scan", "tu2"), std::string(3, '\0'));
  auto stats = store->stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->files, 2u);
  EXPECT_EQ(stats->memos, 2u);
  EXPECT_TRUE(store->put_records({}, {}).ok());
}

TEST(Store, PutActionsWritesEveryRecordInOneGo) {
  testing::TestDir tmp;
  ActionRecord one;
  one.exit_code = 0;
  one.payload = "first";
  one.outputs.push_back({"object", hash_bytes("o1")});
  ActionRecord two = one;
  two.payload = "second";
  two.compile_time_us = 77;
  {
    auto store = open_store(tmp.path());
    ASSERT_TRUE(store->put_action(Hash128{1, 1}, ActionRecord{}).ok());
    ASSERT_TRUE(store->put_actions({{Hash128{1, 1}, one}, {Hash128{2, 2}, two}}).ok());
    EXPECT_TRUE(store->put_actions({}).ok());
  }
  auto store = open_store(tmp.path());
  auto a = store->get_action(Hash128{1, 1});
  auto b = store->get_action(Hash128{2, 2});
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->payload, "first");  // replaced
  ASSERT_EQ(a->outputs.size(), 1u);
  EXPECT_EQ(a->outputs[0].blob, hash_bytes("o1"));
  EXPECT_EQ(b->payload, "second");
  EXPECT_EQ(b->compile_time_us, 77u);
  EXPECT_FALSE(store->get_action(Hash128{3, 3}));
}

TEST(Store, LongKeysAndPaths) {
  testing::TestDir tmp;
  auto store = open_store(tmp.path());
  std::string path = "/" + std::string(5000, 'p');
  FileRecord file;
  file.stat.size = 7;
  ASSERT_TRUE(store->put_file(path, file).ok());
  EXPECT_EQ(store->get_file(path), file);
  std::string key(3000, 'k');
  ASSERT_TRUE(store->put_memo("t", key, "v").ok());
  EXPECT_EQ(store->get_memo("t", key), "v");
}

TEST(Store, VisitMemoSeesTheValueInPlace) {
  testing::TestDir tmp;
  auto store = open_store(tmp.path());
  // Large enough to live on LMDB overflow pages, like a closure memo.
  std::string value(100000, 'm');
  value[77777] = 'x';
  ASSERT_TRUE(store->put_memo("closure", "tu", value).ok());
  ASSERT_TRUE(store->put_memo("closure", "tu2", "").ok());
  int calls = 0;
  std::string seen;
  EXPECT_TRUE(store->visit_memo("closure", "tu", [&](std::string_view v) {
    ++calls;
    seen = std::string(v);
  }));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, value);
  EXPECT_TRUE(store->visit_memo("closure", "tu2", [&](std::string_view v) {
    ++calls;
    seen = std::string(v);
  }));
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(seen, "");
  EXPECT_FALSE(store->visit_memo("closure", "tu3", [&](std::string_view) { ++calls; }));
  EXPECT_FALSE(store->visit_memo("other", "tu", [&](std::string_view) { ++calls; }));
  EXPECT_EQ(calls, 2);
}

TEST(Store, RolloverOverManyPacksStaysAFewFiles) {
  testing::TestDir tmp;
  std::mt19937_64 rng(2);
  auto store = open_store(tmp.path(), 64 << 10);
  std::vector<std::string> blobs;
  for (int i = 0; i < 3000; ++i) {
    blobs.push_back(random_bytes(rng, 100 + rng() % 900));
    ASSERT_TRUE(store->put_blob(blobs.back()).ok());
  }
  auto stats = store->stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_GT(stats->packs, 10u);
  for (const auto& b : blobs) {
    auto got = store->get_blob(hash_bytes(b));
    ASSERT_TRUE(got);
    ASSERT_EQ(*got, b);
  }
  // Thousands of entries: index + lock + counters + reset lock + config + packs.
  EXPECT_LE(count_files(tmp.path()), stats->packs + 5);
  // A blob bigger than a pack gets a pack of its own.
  std::string big = random_bytes(rng, 300 << 10);
  ASSERT_TRUE(store->put_blob(big).ok());
  EXPECT_EQ(store->get_blob(hash_bytes(big)), big);
  store.reset();
  store = open_store(tmp.path(), 64 << 10);
  EXPECT_EQ(store->get_blob(hash_bytes(big)), big);
  auto report = store->verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->clean());
  EXPECT_EQ(report->blobs_checked, blobs.size() + 1);
}

TEST(Store, PageAlignedBlobsAreAlignedAndPadded) {
  testing::TestDir tmp;
  auto store = open_store(tmp.path());
  ASSERT_TRUE(store->put_blob("x").ok());  // unaligned first
  BlobOptions aligned;
  aligned.page_aligned = true;
  auto id = store->put_blob("x", aligned);  // same bytes, now wanted aligned
  ASSERT_TRUE(id.ok());
  auto id2 = store->put_blob(std::string(5000, 'y'), aligned);
  ASSERT_TRUE(id2.ok());
  auto a = store->get_blob(id.value());
  auto b = store->get_blob(id2.value());
  ASSERT_TRUE(a && b);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a->data()) % 4096, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % 4096, 0u);
  EXPECT_EQ(*a, "x");
  // Zero padding up to the page end.
  for (size_t i = b->size(); i < 8192; ++i) ASSERT_EQ(b->data()[i], 0);
  auto stats = store->stats();
  EXPECT_EQ(stats->pack_bytes % 4096, 0u);
}

TEST(Store, LocateBlobGivesTheAlignedBytesInThePackFile) {
  testing::TestDir tmp;
  auto store = open_store(tmp.path());
  auto plain = store->put_blob("not aligned");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(store->locate_blob(plain.value()));  // only page-aligned blobs have a place
  EXPECT_FALSE(store->locate_blob(hash_bytes("never stored")));
  BlobOptions aligned;
  aligned.page_aligned = true;
  const std::string bytes(6000, 'z');
  auto id = store->put_blob(bytes, aligned);
  ASSERT_TRUE(id.ok());
  auto place = store->locate_blob(id.value());
  ASSERT_TRUE(place);
  EXPECT_EQ(place->offset % 4096, 0u);
  EXPECT_EQ(place->size, bytes.size());
  ASSERT_EQ(place->pack_path[0], '/');
  struct stat st;
  ASSERT_EQ(::stat(place->pack_path.c_str(), &st), 0);
  EXPECT_EQ(place->pack_dev, uint64_t(st.st_dev));
  EXPECT_EQ(place->pack_ino, uint64_t(st.st_ino));
  // The file holds the bytes at that offset, then zeros up to the page end.
  std::string in_file(8192, '\1');
  FILE* f = std::fopen(place->pack_path.c_str(), "rb");
  ASSERT_TRUE(f);
  std::fseek(f, long(place->offset), SEEK_SET);
  ASSERT_EQ(std::fread(in_file.data(), 1, in_file.size(), f), in_file.size());
  std::fclose(f);
  EXPECT_EQ(in_file.substr(0, bytes.size()), bytes);
  EXPECT_EQ(in_file.substr(bytes.size()), std::string(8192 - bytes.size(), '\0'));
}

TEST(Store, BatchPut) {
  testing::TestDir tmp;
  auto store = open_store(tmp.path(), 64 << 10);
  std::mt19937_64 rng(3);
  std::vector<std::string> blobs;
  for (int i = 0; i < 500; ++i) blobs.push_back(random_bytes(rng, rng() % 2000));
  blobs.push_back(blobs[0]);  // a duplicate inside the batch
  std::vector<std::string_view> views(blobs.begin(), blobs.end());
  auto ids = store->put_blobs(views);
  ASSERT_TRUE(ids.ok()) << ids.message();
  ASSERT_EQ(ids->size(), blobs.size());
  for (size_t i = 0; i < blobs.size(); ++i) EXPECT_EQ(store->get_blob((*ids)[i]), blobs[i]);
  EXPECT_EQ(store->stats()->blobs, 500u);
}

TEST(Store, GcEvictsOldPacksAndCopiesRecentlyUsedForward) {
  testing::TestDir tmp;
  StoreOptions o;
  o.dir = tmp.path();
  o.pack_size = 64 << 10;
  o.auto_gc = false;
  o.keep_recent_seconds = 3600;
  std::mt19937_64 rng(4);
  std::vector<std::string> blobs;
  {
    auto store = std::move(Store::open(o).value());
    for (int i = 0; i < 400; ++i) {
      blobs.push_back(random_bytes(rng, 1000));
      ASSERT_TRUE(store->put_blob(blobs.back()).ok());
    }
  }
  // Everything was just used, so a gc keeps (copies) all of it up to the budget.
  auto store = std::move(Store::open(o).value());
  auto before = store->stats();
  ASSERT_GT(before->pack_bytes, 200u << 10);
  auto report = store->gc(200 << 10);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_GT(report->packs_evicted, 0u);
  EXPECT_GT(report->blobs_copied, 0u);
  auto after = store->stats();
  EXPECT_LE(after->pack_bytes, 200u << 10);
  EXPECT_EQ(report->bytes_after, after->pack_bytes);
  size_t readable = 0;
  for (const auto& b : blobs) {
    auto got = store->get_blob(hash_bytes(b));
    if (got) {
      ASSERT_EQ(*got, b);
      ++readable;
    }
  }
  EXPECT_GT(readable, 0u);
  EXPECT_LT(readable, blobs.size());
  EXPECT_EQ(readable, after->blobs);
  auto v = store->verify();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->clean());
  // gc to zero empties the cache; the store keeps working.
  ASSERT_TRUE(store->gc(0).ok());
  EXPECT_EQ(store->stats()->blobs, 0u);
  ASSERT_TRUE(store->put_blob("after gc").ok());
  EXPECT_EQ(store->get_blob(hash_bytes("after gc")), "after gc");
}

TEST(Store, GcWithoutRecentUseCopiesNothing) {
  testing::TestDir tmp;
  StoreOptions o;
  o.dir = tmp.path();
  o.pack_size = 64 << 10;
  o.auto_gc = false;
  o.keep_recent_seconds = -3600;  // "recent" lies in the future: nothing is
  auto store = std::move(Store::open(o).value());
  std::mt19937_64 rng(5);
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(store->put_blob(random_bytes(rng, 1000)).ok());
  auto report = store->gc(100 << 10);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->blobs_copied, 0u);
  EXPECT_LE(store->stats()->pack_bytes, 100u << 10);
}

TEST(Store, AutomaticGcKeepsTheSizeLimit) {
  testing::TestDir tmp;
  StoreOptions o;
  o.dir = tmp.path();
  o.pack_size = 64 << 10;
  o.max_size = 256 << 10;
  o.keep_recent_seconds = -1;
  auto store = std::move(Store::open(o).value());
  std::mt19937_64 rng(6);
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(store->put_blob(random_bytes(rng, 1000)).ok());
  EXPECT_LE(store->stats()->pack_bytes, (256u << 10) + (64u << 10));
}

TEST(Store, ClearEmptiesEverything) {
  testing::TestDir tmp;
  auto store = open_store(tmp.path());
  ASSERT_TRUE(store->put_blob("a").ok());
  ASSERT_TRUE(store->put_memo("t", "k", "v").ok());
  ASSERT_TRUE(store->add_counter("hits", 1).ok());
  ASSERT_TRUE(store->clear().ok());
  EXPECT_FALSE(store->get_blob(hash_bytes("a")));
  EXPECT_FALSE(store->get_memo("t", "k"));
  auto stats = store->stats();
  EXPECT_EQ(stats->blobs, 0u);
  EXPECT_EQ(stats->counters["hits"], 0);
  ASSERT_TRUE(store->put_blob("b").ok());
  EXPECT_EQ(store->get_blob(hash_bytes("b")), "b");
}

TEST(Store, ExportImportRoundTrip) {
  testing::TestDir tmp;
  std::mt19937_64 rng(7);
  std::vector<std::string> blobs;
  auto src = open_store(tmp.at("src"));
  for (int i = 0; i < 100; ++i) {
    blobs.push_back(random_bytes(rng, rng() % 3000));
    BlobOptions o;
    o.page_aligned = i % 3 == 0;
    ASSERT_TRUE(src->put_blob(blobs.back(), o).ok());
  }
  ActionRecord action;
  action.outputs.push_back({"object", hash_bytes(blobs[1])});
  ASSERT_TRUE(src->put_action(hash_bytes("k"), action).ok());
  ASSERT_TRUE(src->put_file("a.h", FileRecord{}).ok());
  ASSERT_TRUE(src->put_memo("m", "k", "v").ok());
  ASSERT_TRUE(export_archive(*src, tmp.at("cache.lpa")).ok());

  auto dst = open_store(tmp.at("dst"));
  auto report = import_archive(*dst, tmp.at("cache.lpa"));
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_EQ(report->blobs, blobs.size());
  EXPECT_EQ(report->actions, 1u);
  EXPECT_EQ(report->files, 1u);
  EXPECT_EQ(report->memos, 1u);
  for (size_t i = 0; i < blobs.size(); ++i) {
    auto got = dst->get_blob(hash_bytes(blobs[i]));
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, blobs[i]);
    if (i % 3 == 0) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(got->data()) % 4096, 0u);
    }
  }
  EXPECT_EQ(dst->get_action(hash_bytes("k")), action);
  EXPECT_TRUE(dst->get_file("a.h"));
  EXPECT_EQ(dst->get_memo("m", "k"), "v");
}

TEST(Store, LastUseIsBatchedNotWrittenPerHit) {
  testing::TestDir tmp;
  StoreOptions o;
  o.dir = tmp.path();
  auto store = std::move(Store::open(o).value());
  ASSERT_TRUE(store->put_blob("hot").ok());
  store.reset();
  // A reader that hits many times leaves the index file untouched.
  auto index = tmp.at("index.mdb");
  auto before = std::filesystem::last_write_time(index);
  auto size_before = std::filesystem::file_size(index);
  store = std::move(Store::open(o).value());
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(store->get_blob(hash_bytes("hot")));
  store.reset();
  EXPECT_EQ(std::filesystem::last_write_time(index), before);
  EXPECT_EQ(std::filesystem::file_size(index), size_before);
}

}  // namespace
}  // namespace lexpack::cache
