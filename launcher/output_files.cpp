// Large single writes into a fresh temporary file, then rename(2). The old
// output is unlinked first: ext4 flushes a file renamed over an existing one
// (auto_da_alloc), which made replacing an object cost milliseconds. An old
// output that already holds the bytes is only touched: creating, writing and
// unlinking inodes was the largest cost of a hit after the stats. A written
// output can be vouched for by its signature (see unrepeatable_stamp).
#include "launcher/output_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "base/process.h"
#include "launcher/temp_files.h"

namespace lexpack::launcher {
namespace {

// Why a stat signature can vouch for the bytes just written, although the
// file is seconds younger than the file table's settled rule asks: a write
// in place of the same size within the same clock tick would leave size,
// mtime and ctime as they were. So the new file, still private under its
// temporary name, gets an explicit mtime no write can ever produce again:
// one nanosecond (or a few) before the kernel's coarse file clock read just
// before. The kernel stamps every later write with that clock or, with
// multigrain timestamps, a time no earlier than it; so any later write, in
// the same tick or not, leaves an mtime other than the stamp. The stamp is
// odd and not a multiple of 5 ns: a filesystem that keeps coarser times (a
// divisor or multiple of a second) rounds it, which fstat shows, and then
// nothing is vouched (it could round a later write's time onto the stamp).
// Only local filesystems: on a network one another machine's clock stamps.
// What this does not see, like every stat-based check: the real-time clock
// stepped back, or someone setting this exact mtime on purpose.
int64_t unrepeatable_stamp() {
  struct timespec ts;
  if (::clock_gettime(CLOCK_REALTIME_COARSE, &ts) != 0) return 0;
  int64_t t = int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec - 1;
  while (t % 2 == 0 || t % 5 == 0) --t;
  return t;
}

// Stamps the open file `fd` (written, not yet renamed into place) and
// returns the stamp, or 0 when it cannot vouch for it.
int64_t stamp_written_file(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0 || !base::local_filesystem_type(int64_t(fs.f_type))) return 0;
  int64_t stamp = unrepeatable_stamp();
  if (stamp <= 0) return 0;
  struct timespec times[2];
  times[0].tv_sec = 0;
  times[0].tv_nsec = UTIME_OMIT;
  times[1].tv_sec = stamp / 1'000'000'000;
  times[1].tv_nsec = stamp % 1'000'000'000;
  if (::futimens(fd, times) != 0) return 0;
  struct stat st;
  if (::fstat(fd, &st) != 0 || base::signature_of(st).mtime_ns != stamp) return 0;
  return stamp;
}

}  // namespace

bool write_file_atomic(const std::string& path, std::string_view bytes, std::string* err,
                       unsigned mode, std::optional<base::StatSignature>* vouched) {
  if (vouched) vouched->reset();
  std::string tmp = path + ".lexpack-tmp-" + std::to_string(::getpid());
  TempFileGuard guard(tmp);  // an interrupt must not leave it behind
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode_t(mode));
  if (fd < 0) {
    *err = "cannot create " + tmp + ": " + std::strerror(errno);
    return false;
  }
  bool ok = base::write_all(fd, bytes);
  int saved = errno;
  std::optional<Stamped> stamped;
  if (ok && vouched) stamped = stamp_for_vouching(fd);
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
  // The inode renamed into place, still with the stamp (the rename set its
  // ctime) and the size written: no write has touched it since the stamp.
  if (stamped) *vouched = still_stamped(path, *stamped);
  return true;
}

std::optional<Stamped> stamp_for_vouching(int fd) {
  struct stat st {};
  if (int64_t stamp = stamp_written_file(fd); stamp != 0 && ::fstat(fd, &st) == 0) {
    return Stamped{uint64_t(st.st_dev), uint64_t(st.st_ino), uint64_t(st.st_size), stamp};
  }
  return std::nullopt;
}

std::optional<base::StatSignature> still_stamped(const std::string& path, const Stamped& s) {
  base::StatSignature now;
  if (base::stat_file(path, &now) && now.dev == s.dev && now.ino == s.ino &&
      now.mtime_ns == s.stamp && now.size == s.size) {
    return now;
  }
  return std::nullopt;
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
