// A small filesystem that is full, for tests of what lexpack does when no
// block can be allocated: a 2 MiB tmpfs filled up where the test may mount
// (as root), else a per-process file size limit (RLIMIT_FSIZE).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

#include "tests/support/test_dir.h"

namespace lexpack::cache::testing {

class FullDisk {
 public:
  FullDisk() {
    mount_point_ = tmp_.at("disk");
    ::mkdir(mount_point_.c_str(), 0755);
    mounted_ = ::geteuid() == 0 &&
               ::mount("tmpfs", mount_point_.c_str(), "tmpfs", 0, "size=2m,mode=0755") == 0;
    if (!mounted_) return;
    int fd = ::open((mount_point_ + "/fill").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    static const char block[65536] = {};
    while (fd >= 0 && ::write(fd, block, sizeof block) > 0) {
    }
    while (fd >= 0 && ::write(fd, block, 1) > 0) {
    }
    if (fd >= 0) ::close(fd);
  }
  ~FullDisk() {
    if (mounted_) ::umount2(mount_point_.c_str(), MNT_DETACH);
  }
  // A directory on the full filesystem (or an ordinary one, when the test
  // could not mount and `run` limits the file size instead).
  const std::string& path() const { return mount_point_; }
  bool mounted() const { return mounted_; }
  std::string how() const {
    return mounted_ ? "a full 2 MiB tmpfs" : "RLIMIT_FSIZE of 4 KiB (no tmpfs mount allowed)";
  }

  // Runs body in a child process (so a fault cannot take the test down) and
  // returns its wait status; without the mount, with files limited to 4 KiB.
  int run(const std::function<int()>& body) const {
    pid_t pid = ::fork();
    if (pid == 0) {
      if (!mounted_) {
        ::signal(SIGXFSZ, SIG_IGN);
        struct rlimit limit = {4096, 4096};
        ::setrlimit(RLIMIT_FSIZE, &limit);
      }
      ::_exit(body());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
  }

 private:
  lexpack::testing::TestDir tmp_;
  std::string mount_point_;
  bool mounted_ = false;
};

inline std::string describe_wait(int status) {
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "exit code " + std::to_string(WEXITSTATUS(status));
}

}  // namespace lexpack::cache::testing
