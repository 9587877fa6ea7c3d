// A guarded temporary is gone when the process is interrupted, and the
// signal still ends the process as it would have.
#include "launcher/temp_files.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "tests/support/test_dir.h"

namespace lexpack::launcher {
namespace {

TEST(TempFileGuard, SignalsUnlinkGuardedFiles) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    testing::TestDir dir;
    dir.write("guarded.tmp", "x");
    dir.write("released.tmp", "x");
    pid_t pid = ::fork();
    if (pid == 0) {
      { TempFileGuard released(dir.at("released.tmp")); }
      TempFileGuard guard(dir.at("guarded.tmp"));
      ::raise(sig);
      ::_exit(3);  // not reached: the signal ends the process
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "signal " << sig;
    EXPECT_FALSE(dir.exists("guarded.tmp")) << "signal " << sig;
    EXPECT_TRUE(dir.exists("released.tmp")) << "signal " << sig;
  }
}

}  // namespace
}  // namespace lexpack::launcher
