// flock(2) on <cache>/locks/once-<hash>.lock: released by the kernel when the
// holder exits, however it exits, so a killed process never blocks others
// beyond its own life. The lock files stay (one per question, empty); they
// are not temporaries, so they live outside tmp/, which clear empties.
#include "cache/once_across_processes.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "cache/cache_files.h"
#include "cache/config/config.h"
#include "cache/hash/hash.h"

namespace lexpack::cache {

ComputeOnce::ComputeOnce(const std::string& dir, std::string_view what, int max_wait_ms) {
  if (dir.empty()) return;
  const FileModes modes = FileModes::from(load_config(dir));
  auto locks = open_cache_dir(AT_FDCWD, dir + "/locks", true, modes);
  if (!locks.ok()) return;
  const std::string name = "once-" + hash_bytes(what).hex().substr(0, 16) + ".lock";
  auto fd = open_cache_file(*locks, name, O_RDWR | O_CREAT, modes, dir + "/locks/" + name);
  ::close(*locks);
  if (!fd.ok()) return;
  fd_ = *fd;
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  waited_ = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(max_wait_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  }
  // Waited long enough: compute without the lock rather than stall a build.
  ::close(fd_);
  fd_ = -1;
}

ComputeOnce::~ComputeOnce() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace lexpack::cache
