// Runs a piece of a test as another user (a child process that drops to the
// given uid, gid and group list), for tests of caches shared between users.
// Only root can do that; callers skip otherwise.
#pragma once

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

namespace lexpack::cache::testing {

struct TestUser {
  uid_t uid;
  gid_t gid;                  // primary group
  std::vector<gid_t> groups;  // supplementary groups
  mode_t umask = 022;
};

// The child's exit code, or 128 + signal; 100 when it could not switch users.
inline int run_as(const TestUser& user, const std::function<int()>& body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgroups(user.groups.size(), user.groups.data()) != 0 ||
        ::setresgid(user.gid, user.gid, user.gid) != 0 ||
        ::setresuid(user.uid, user.uid, user.uid) != 0) {
      ::_exit(100);
    }
    ::umask(user.umask);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace lexpack::cache::testing
