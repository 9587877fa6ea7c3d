// Many processes on one cache: 16 forked workers doing thousands of mixed
// puts and gets, and writers killed with SIGKILL at random moments. Afterwards
// verify must find nothing wrong and every completed put must be readable.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "cache/index_env.h"
#include "cache/store.h"
#include "tests/support/test_dir.h"

namespace lexpack::cache {
namespace {

// Deterministic content of worker w's i-th blob, so the parent can rebuild it.
std::string content(int worker, int i) {
  std::mt19937_64 rng(static_cast<uint64_t>(worker) * 1000003u + static_cast<uint64_t>(i));
  std::string s(50 + rng() % 3000, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  if (i % 7 == 0) s = "shared-" + std::to_string(i);  // the same bytes from many workers
  return s;
}

StoreOptions options(const std::string& dir) {
  StoreOptions o;
  o.dir = dir;
  o.pack_size = 256 << 10;
  o.max_size = 1ull << 30;
  return o;
}

// Returns the exit status for the child: 0 when every read was right.
int worker(const std::string& dir, int w, int ops) {
  auto opened = Store::open(options(dir));
  if (!opened.ok()) return 2;
  auto& store = *opened.value();
  std::mt19937_64 rng(static_cast<uint64_t>(w));
  for (int i = 0; i < ops; ++i) {
    std::string bytes = content(w, i);
    BlobOptions bo;
    bo.page_aligned = i % 5 == 0;
    auto id = store.put_blob(bytes, bo);
    if (!id.ok()) return 3;
    ActionRecord a;
    a.outputs.push_back({"object", id.value()});
    a.compile_time_us = static_cast<uint64_t>(i);
    Hasher key;
    key.field(static_cast<uint64_t>(w));
    key.field(static_cast<uint64_t>(i));
    if (!store.put_action(key.digest(), a).ok()) return 4;
    // Read back something of our own and something of another worker.
    int j = static_cast<int>(rng() % static_cast<uint64_t>(i + 1));
    auto mine = store.get_blob(hash_bytes(content(w, j)));
    if (!mine || *mine != content(w, j)) return 5;
    int other = static_cast<int>(rng() % 16);
    std::string theirs = content(other, j);
    auto got = store.get_blob(hash_bytes(theirs));
    if (got && *got != theirs) return 6;
    store.add_counter("hits", 1);
  }
  return 0;
}

TEST(StoreConcurrency, SixteenProcessesMixedPutsAndGets) {
  testing::TestDir tmp;
  constexpr int kWorkers = 16;
  constexpr int kOps = 250;
  std::vector<pid_t> pids;
  for (int w = 0; w < kWorkers; ++w) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(worker(tmp.path(), w, kOps));
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  auto store = std::move(Store::open(options(tmp.path())).value());
  auto report = store->verify();
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_TRUE(report->clean()) << (report->problems.empty() ? "" : report->problems[0]);
  for (int w = 0; w < kWorkers; ++w) {
    for (int i = 0; i < kOps; ++i) {
      std::string bytes = content(w, i);
      auto got = store->get_blob(hash_bytes(bytes));
      ASSERT_TRUE(got) << "worker " << w << " blob " << i;
      ASSERT_EQ(*got, bytes);
      Hasher key;
      key.field(static_cast<uint64_t>(w));
      key.field(static_cast<uint64_t>(i));
      auto a = store->get_action(key.digest());
      ASSERT_TRUE(a);
      ASSERT_EQ(a->outputs.at(0).blob, hash_bytes(bytes));
    }
  }
  auto stats = store->stats();
  EXPECT_EQ(stats->counters["hits"], kWorkers * kOps);
  EXPECT_EQ(stats->actions, static_cast<uint64_t>(kWorkers * kOps));
}

// Opening the store must never wait for another process that has it open
// (a compile holds its store for its whole run). A blocked open dies by the
// alarm, which fails the test.
TEST(StoreConcurrency, OpenNeverWaitsForAnotherOpenStore) {
  testing::TestDir tmp;
  auto first = Store::open(options(tmp.path()));
  ASSERT_TRUE(first.ok()) << first.message();
  ASSERT_TRUE(first.value()->add_counter("hits", 1).ok());
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::alarm(20);
    auto second = Store::open(options(tmp.path()));
    ::_exit(second.ok() && second.value()->add_counter("hits", 1).ok() ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the second open was killed (signal "
                                 << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// A writer that never stops: puts, actions, and (with a small size limit)
// automatic evictions, so kills land in every phase.
[[noreturn]] void endless_writer(const std::string& dir, int w) {
  StoreOptions o = options(dir);
  o.pack_size = 64 << 10;
  o.max_size = 512 << 10;
  auto opened = Store::open(o);
  if (!opened.ok()) ::_exit(2);
  auto& store = *opened.value();
  for (int i = 0;; ++i) {
    auto id = store.put_blob(content(w, i));
    if (id.ok()) {
      ActionRecord a;
      a.outputs.push_back({"object", id.value()});
      store.put_action(hash_bytes(std::to_string(w) + "/" + std::to_string(i)), a);
    }
    auto got = store.get_blob(hash_bytes(content(w, i / 2)));
    if (got && *got != content(w, i / 2)) ::_exit(6);
  }
}

TEST(StoreConcurrency, WritersKilledAtRandomMoments) {
  testing::TestDir tmp;
  std::mt19937_64 rng(42);
  constexpr int kRounds = 25;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<pid_t> pids;
    for (int w = 0; w < 4; ++w) {
      pid_t pid = ::fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) endless_writer(tmp.path(), round * 4 + w);
      pids.push_back(pid);
    }
    ::usleep(static_cast<useconds_t>(5000 + rng() % 40000));
    for (pid_t pid : pids) ::kill(pid, SIGKILL);
    for (pid_t pid : pids) {
      int status = 0;
      ASSERT_EQ(::waitpid(pid, &status, 0), pid);
      // Killed, or (had it stopped by itself) never with a wrong read.
      if (WIFEXITED(status)) {
        EXPECT_NE(WEXITSTATUS(status), 6);
      }
    }
    auto store = std::move(Store::open(options(tmp.path())).value());
    auto report = store->verify();
    ASSERT_TRUE(report.ok()) << report.message();
    ASSERT_TRUE(report->clean()) << "round " << round << ": "
                                 << (report->problems.empty() ? "" : report->problems[0]);
  }
  // Still fully working afterwards.
  auto store = std::move(Store::open(options(tmp.path())).value());
  ASSERT_TRUE(store->put_blob("after the crashes").ok());
  EXPECT_EQ(store->get_blob(hash_bytes("after the crashes")), "after the crashes");
  auto report = store->verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->clean());
  EXPECT_GT(report->blobs_checked, 0u);
}

// The structure check walks the snapshot its read transaction pins, but the
// meta page it starts from is rewritten by every second commit. Checks running
// beside a busy writer must never call the index damaged: that resets the
// whole cache (this is how concurrent builds once lost their entries).
TEST(StoreConcurrency, StructureChecksBesideABusyWriterFindNoDamage) {
  testing::TestDir tmp;
  const std::string path = tmp.path() + "/index.mdb";
  int rc = 0;
  {
    auto index = Index::open(path, false, false, false, FileModes{}, &rc);
    ASSERT_TRUE(index.ok()) << index.message();
  }
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto index = Index::open(path, false, false, false, FileModes{}, &rc);
    if (!index.ok()) ::_exit(2);
    for (uint64_t i = 0;; ++i) {
      base::Status s = index.value()->write([&](Txn& t) {
        base::Status put;
        for (uint64_t k = 0; k < 20 && put.ok(); ++k) {
          put = t.put(Table::kBlobs, std::to_string((i * 20 + k) % 5000), std::string(40, 'x'));
        }
        return put;
      });
      if (!s.ok()) ::_exit(3);
    }
  }
  auto index = Index::open(path, false, false, false, FileModes{}, &rc);
  ASSERT_TRUE(index.ok()) << index.message();
  int problems = 0;
  std::string first;
  for (int i = 0; i < 3000; ++i) {
    base::Status s = index.value()->check_structure();
    if (!s.ok() && problems++ == 0) first = s.message();
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writer stopped by itself: " << WEXITSTATUS(status);
  EXPECT_EQ(problems, 0) << first;
  EXPECT_FALSE(index.value()->damaged());
}

// Another process may reset a damaged cache: it unlinks the index and makes a
// new, smaller one. A process still reading its old mapping must measure that
// mapping, not the new file, or it finds "damage" and resets again, dropping
// what the others stored since.
TEST(StoreConcurrency, AResetElsewhereIsNotDamageHere) {
  testing::TestDir tmp;
  auto old_store = std::move(Store::open(options(tmp.path())).value());
  std::vector<std::string> blobs;
  for (int i = 0; i < 2000; ++i) blobs.push_back("blob " + std::to_string(i));
  for (const auto& b : blobs) ASSERT_TRUE(old_store->put_blob(b).ok());
  // What a reset elsewhere leaves: a new index in the old one's place.
  std::filesystem::remove(tmp.path() + "/index.mdb");
  std::filesystem::remove(tmp.path() + "/index.mdb-lock");
  auto new_store = std::move(Store::open(options(tmp.path())).value());
  ASSERT_TRUE(new_store->put_blob("stored after the reset").ok());
  // The old process goes on: its index file grows past the new one's size.
  for (int i = 0; i < 2000; ++i) blobs.push_back("later blob " + std::to_string(i));
  for (size_t i = 2000; i < blobs.size(); ++i) old_store->put_blob(blobs[i]);
  for (const auto& b : blobs) old_store->get_blob(hash_bytes(b));
  for (const auto& m : old_store->take_messages()) {
    EXPECT_EQ(m.find("damaged"), std::string::npos) << m;
  }
  EXPECT_EQ(new_store->get_blob(hash_bytes("stored after the reset")), "stored after the reset");
}

}  // namespace
}  // namespace lexpack::cache
