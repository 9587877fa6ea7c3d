// Large single writes into a fresh temporary file, then rename(2). The old
// output is unlinked first: ext4 flushes a file renamed over an existing one
// (auto_da_alloc), which made replacing an object cost milliseconds. An old
// output that already holds the bytes is only touched: creating, writing and
// unlinking inodes was the largest cost of a hit after the stats.
#include "ninja_integration/launcher/output_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "base/process.h"
#include "ninja_integration/launcher/temp_files.h"

namespace lexpack::launcher {

bool write_file_atomic(const std::string& path, std::string_view bytes, std::string* err,
                       unsigned mode) {
  std::string tmp = path + ".lexpack-tmp-" + std::to_string(::getpid());
  TempFileGuard guard(tmp);  // an interrupt must not leave it behind
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode_t(mode));
  if (fd < 0) {
    *err = "cannot create " + tmp + ": " + std::strerror(errno);
    return false;
  }
  bool ok = base::write_all(fd, bytes);
  int saved = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (!ok) {
    *err = "cannot write " + tmp + ": " + std::strerror(saved);
    ::unlink(tmp.c_str());
    return false;
  }
  // Readers never see a partial file either way; between the two calls they
  // see no file, which is less than a compiler writing in place shows them.
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    *err = "cannot replace " + path + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    *err = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

bool touch_if_identical(const std::string& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool same = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && uint64_t(st.st_size) == bytes.size();
  char buf[65536];
  size_t done = 0;
  while (same && done < bytes.size()) {
    ssize_t n = ::read(fd, buf, std::min(sizeof buf, bytes.size() - done));
    if (n < 0 && errno == EINTR) continue;
    same = n > 0 && std::memcmp(buf, bytes.data() + done, size_t(n)) == 0;
    if (same) done += size_t(n);
  }
  // Nothing past the expected end either (the file may have grown meanwhile).
  if (same) same = ::read(fd, buf, 1) == 0;
  if (same) same = ::futimens(fd, nullptr) == 0;
  ::close(fd);
  return same;
}

}  // namespace lexpack::launcher
