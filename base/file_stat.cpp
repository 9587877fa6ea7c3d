// stat(2) reduced to a signature, and the rule for when a signature can be
// trusted (settled): a file written within the last second may change again
// without its mtime changing.
#include "base/file_stat.h"

#include <sys/stat.h>

#include <ctime>

namespace lexpack::base {
namespace {

constexpr int64_t kSettleNs = 1'000'000'000;

}  // namespace

StatSignature signature_of(const struct stat& st) {
  StatSignature sig;
  sig.dev = uint64_t(st.st_dev);
  sig.ino = uint64_t(st.st_ino);
  sig.size = uint64_t(st.st_size);
  sig.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  sig.ctime_ns = int64_t(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
  return sig;
}

bool stat_file(const std::string& path, StatSignature* sig, bool* is_dir) {
  struct stat st;
  if (is_dir) *is_dir = false;
  if (::stat(path.empty() ? "." : path.c_str(), &st) != 0) return false;
  if (is_dir) *is_dir = S_ISDIR(st.st_mode);
  if (!S_ISREG(st.st_mode)) return false;
  *sig = signature_of(st);
  return true;
}

bool stat_dir(const std::string& path, StatSignature* sig) {
  struct stat st;
  if (::stat(path.empty() ? "." : path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  *sig = signature_of(st);
  return true;
}

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.empty() ? "." : path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool local_filesystem_type(int64_t f_type) {
  switch (uint32_t(f_type)) {
    case 0xEF53:      // ext2/3/4
    case 0x58465342:  // xfs
    case 0x9123683E:  // btrfs
    case 0x01021994:  // tmpfs
      return true;
    default:
      return false;
  }
}

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t file_clock_ns() {
  timespec ts;
  if (::clock_gettime(CLOCK_REALTIME_COARSE, &ts) != 0) return now_ns();
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t next_file_clock_tick_ns() {
  // A kernel with multigrain timestamps (Linux 6.13 on) stamps a file whose
  // times were just read with the fine clock, which may be ahead of the
  // coarse one by more than a tick. Waiting for the coarse clock to pass the
  // fine clock's reading now puts every stamp made before this call behind
  // the value returned, which is still a reading of the coarse clock: a
  // change after it is stamped at least as late.
  const int64_t before = now_ns();
  for (int i = 0; i < 400; ++i) {
    const int64_t t = file_clock_ns();
    if (t > before) return t;
    timespec pause = {0, 250'000};
    ::nanosleep(&pause, nullptr);
  }
  return file_clock_ns();
}

bool signature_is_settled(const StatSignature& sig, int64_t now) {
  return sig.mtime_ns + kSettleNs <= now && sig.ctime_ns + kSettleNs <= now;
}

}  // namespace lexpack::base
