// The default MemoStatSource: stats relative to O_PATH handles on the
// checked directories, so that a check, the whole cost of a hit, walks each
// directory path once, not once per file.
#include "closure/memo_stat_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace lexpack::closure {

DirHandles::~DirHandles() {
  for (const auto& [dir, fd] : fds_) {
    if (fd >= 0) ::close(fd);
  }
}

bool DirHandles::stat_file(std::string_view path, base::StatSignature* sig) {
  struct stat st;
  if (!stat_path(path, &st) || !S_ISREG(st.st_mode)) return false;
  *sig = base::signature_of(st);
  return true;
}

bool DirHandles::stat_dir(std::string_view path, base::StatSignature* sig) {
  struct stat st;
  if (!stat_path(path, &st) || !S_ISDIR(st.st_mode)) return false;
  *sig = base::signature_of(st);
  return true;
}

bool DirHandles::stat_path(std::string_view path, struct stat* st) {
  size_t slash = path.rfind('/');
  // Nothing to share for a name in the working directory, a bare "/" or a
  // path ending in a slash: ask for the path as given.
  if (slash == std::string::npos || slash + 1 == path.size()) {
    return ::stat(path.empty() ? "." : terminated(path), st) == 0;
  }
  int fd = dir_fd(path.substr(0, slash == 0 ? 1 : slash));
  if (fd == kMissing) return false;  // as stat(2) would answer, without a walk
  if (fd < 0) return ::stat(terminated(path), st) == 0;
  return ::fstatat(fd, terminated(path.substr(slash + 1)), st, 0) == 0;
}

const char* DirHandles::terminated(std::string_view s) {
  name_.assign(s);
  return name_.c_str();
}

int DirHandles::dir_fd(std::string_view dir) {
  auto it = fds_.find(dir);
  if (it != fds_.end()) return it->second;
  std::string key(dir);
  int fd = -1;
  // A subdirectory of a directory already open: one lookup, not a walk.
  size_t slash = key.rfind('/');
  auto parent = fds_.end();
  if (slash != std::string::npos && slash > 0 && slash + 1 < key.size()) {
    parent = fds_.find(std::string_view(key).substr(0, slash));
  }
  if (parent != fds_.end() && parent->second == kMissing) {
    fd = kMissing;  // below a directory that is not there, as most missing candidates are
  } else if (open_ >= kMaxHandles) {
    return -1;  // well clear of the descriptor limit: plain stat(2) from here
  } else {
    fd = parent != fds_.end() && parent->second >= 0
             ? ::openat(parent->second, key.c_str() + slash + 1, O_PATH | O_DIRECTORY | O_CLOEXEC)
             : ::open(key.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    // No entry, or a file where a directory of the path would be: stat(2)
    // of any name below fails the same way.
    if (fd == -1 && (errno == ENOENT || errno == ENOTDIR)) fd = kMissing;
    if (fd >= 0) ++open_;
  }
  fds_.emplace(std::move(key), fd);
  return fd;
}

}  // namespace lexpack::closure
