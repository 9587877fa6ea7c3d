// Making and sweeping the temporaries kept in the cache directory; see
// orphan_files.h. Names start with the owner's pid so a sweep can tell.
#include "cache/orphan_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <random>

namespace lexpack::cache {

namespace {

constexpr int64_t kMinAgeSeconds = 60;
constexpr int64_t kMaxAgeSeconds = 86400;

bool process_gone(pid_t pid) {
  return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
}

// The pid a name starts with ("1234-ab12cd.d", "1234.keys"), or 0.
pid_t owner_of(const char* name) {
  char* end = nullptr;
  long pid = std::strtol(name, &end, 10);
  if (end == name || pid <= 0 || (*end != '-' && *end != '.')) return 0;
  return static_cast<pid_t>(pid);
}

uint64_t sweep(int parent_fd, const char* sub, bool keys_only) {
  int fd = ::openat(parent_fd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return 0;
  }
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  uint64_t removed = 0;
  while (const struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    pid_t pid = owner_of(e->d_name);
    if (pid == 0) continue;
    if (keys_only && (name.size() < 5 || name.compare(name.size() - 5, 5, ".keys") != 0)) continue;
    struct stat st;
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) continue;
    int64_t age = now - static_cast<int64_t>(st.st_mtime);
    bool stale = age > kMaxAgeSeconds || (age >= kMinAgeSeconds && process_gone(pid));
    if (stale && ::unlinkat(::dirfd(d), e->d_name, 0) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

}  // namespace

base::Result<std::string> make_cache_temp(const std::string& dir, const std::string& suffix,
                                          const FileModes& modes) {
  auto top = open_cache_dir(AT_FDCWD, dir, false, modes);
  if (!top.ok()) return top.status();
  auto tmp = open_cache_dir(*top, kTempDirName, true, modes);
  ::close(*top);
  if (!tmp.ok()) return base::Status::error(dir + "/" + tmp.message());
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device seed;
  std::mt19937 rng(seed());
  for (int attempt = 0; attempt < 32; ++attempt) {
    std::string name = std::to_string(::getpid()) + "-";
    for (int i = 0; i < 8; ++i) name += kChars[rng() % (sizeof kChars - 1)];
    name += suffix;
    std::string path = dir + "/" + kTempDirName + "/" + name;
    auto fd = open_cache_file(*tmp, name, O_WRONLY | O_CREAT | O_EXCL, modes, path);
    if (fd.ok()) {
      ::close(*fd);
      ::close(*tmp);
      return path;
    }
    if (errno != EEXIST) {
      ::close(*tmp);
      return fd.status();
    }
  }
  ::close(*tmp);
  return base::Status::error(dir + "/" + kTempDirName + ": no free temporary name");
}

uint64_t sweep_leftovers(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  uint64_t removed = sweep(fd, kTempDirName, false) + sweep(fd, "builds", true);
  ::close(fd);
  return removed;
}

}  // namespace lexpack::cache
