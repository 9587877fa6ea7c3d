// ComputeOnce: concurrent processes compute a result once; a waiter never
// waits past its bound, nor for a holder that died.
#include "cache/once_across_processes.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "tests/support/test_dir.h"

namespace lexpack::cache {
namespace {

void append(const std::string& path, const std::string& line) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  ssize_t n = ::write(fd, line.data(), line.size());
  (void)n;
  ::close(fd);
}

TEST(ComputeOnce, ConcurrentProcessesComputeOnce) {
  testing::TestDir dir;
  const std::string result = dir.at("result"), log = dir.at("computed");
  std::vector<pid_t> pids;
  for (int i = 0; i < 4; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ComputeOnce once(dir.path(), "the question");
      if (once.waited() && std::filesystem::exists(result)) ::_exit(0);
      append(log, "x");
      ::usleep(300 * 1000);  // the work
      append(result, "answer");
      ::_exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(dir.read("computed"), "x");
}

TEST(ComputeOnce, AWaiterStopsAtItsBoundAndNeverWaitsForTheDead) {
  testing::TestDir dir;
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t holder = ::fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    ComputeOnce once(dir.path(), "slow");
    char c = 1;
    ssize_t n = ::write(ready[1], &c, 1);
    (void)n;
    ::sleep(30);
    ::_exit(0);
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  auto t0 = std::chrono::steady_clock::now();
  {
    ComputeOnce once(dir.path(), "slow", 200);
    EXPECT_TRUE(once.waited());
  }
  auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, std::chrono::milliseconds(200));
  EXPECT_LT(waited, std::chrono::seconds(5));
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  t0 = std::chrono::steady_clock::now();
  {
    ComputeOnce once(dir.path(), "slow", 20000);
    EXPECT_FALSE(once.waited());  // the lock died with its holder
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  ::close(ready[0]);
  ::close(ready[1]);
}

}  // namespace
}  // namespace lexpack::cache
