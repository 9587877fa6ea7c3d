// Temporaries of killed processes in the cache directory: gc and clear
// remove those whose process is gone and keep those of running ones.
#include "cache/orphan_files.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cache/store.h"
#include "tests/support/open_store.h"
#include "tests/support/test_dir.h"

namespace lexpack::cache {
namespace {

// A pid that no process has now: a child that already exited.
pid_t dead_pid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

void make_old(const std::string& path, int seconds) {
  std::ofstream(path) << "x";
  struct timeval times[2];
  ::gettimeofday(&times[0], nullptr);
  times[0].tv_sec -= seconds;
  times[1] = times[0];
  ASSERT_EQ(::utimes(path.c_str(), times), 0);
}

class Leftovers : public ::testing::TestWithParam<bool> {};

TEST_P(Leftovers, OnlyThoseOfGoneProcessesAreSwept) {
  const bool use_clear = GetParam();
  lexpack::testing::TestDir tmp;
  const std::string dir = tmp.at("cache");
  auto store = testing::open_store(dir);
  ASSERT_TRUE(store);
  auto mine = store->make_temp(".d");
  ASSERT_TRUE(mine.ok()) << mine.message();
  EXPECT_EQ(mine->rfind(dir + "/tmp/" + std::to_string(::getpid()) + "-", 0), 0u) << *mine;

  std::filesystem::create_directories(dir + "/builds");
  pid_t gone = dead_pid();
  const std::string gone_tmp = dir + "/tmp/" + std::to_string(gone) + "-abcdefgh.d";
  const std::string gone_keys = dir + "/builds/" + std::to_string(gone) + ".keys";
  const std::string fresh_gone = dir + "/tmp/" + std::to_string(gone) + "-fresh000.d";
  const std::string live_keys = dir + "/builds/" + std::to_string(::getpid()) + ".keys";
  const std::string last = dir + "/builds/last.keys";
  make_old(gone_tmp, 120);
  make_old(gone_keys, 120);
  make_old(fresh_gone, 0);  // may be another pid namespace's live file
  make_old(live_keys, 3600);
  make_old(last, 3600);

  if (use_clear) {
    ASSERT_TRUE(store->clear().ok());
  } else {
    auto report = store->gc(1ull << 40);
    ASSERT_TRUE(report.ok()) << report.message();
    EXPECT_EQ(report->leftovers_removed, 2u);
  }
  EXPECT_FALSE(std::filesystem::exists(gone_tmp));
  EXPECT_FALSE(std::filesystem::exists(gone_keys));
  EXPECT_TRUE(std::filesystem::exists(fresh_gone));
  EXPECT_TRUE(std::filesystem::exists(live_keys));
  EXPECT_TRUE(std::filesystem::exists(last));
  EXPECT_TRUE(std::filesystem::exists(*mine));
}

INSTANTIATE_TEST_SUITE_P(GcAndClear, Leftovers, ::testing::Values(false, true));

}  // namespace
}  // namespace lexpack::cache
