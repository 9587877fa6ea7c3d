// The default MemoStatSource: stats relative to O_PATH handles on the
// checked directories, so that a check, the whole cost of a hit, walks each
// directory path once, not once per file.
#include "closure/memo_stat_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
  // Keep well clear of the descriptor limit: beyond this, plain stat(2).
  if (fds_.size() >= kMaxHandles) return -1;
  std::string key(dir);
  int fd = -1;
  // A subdirectory of a directory already open: one lookup, not a walk.
  size_t slash = key.rfind('/');
  if (slash != std::string::npos && slash > 0 && slash + 1 < key.size()) {
    auto parent = fds_.find(std::string_view(key).substr(0, slash));
    if (parent != fds_.end() && parent->second >= 0) {
      fd = ::openat(parent->second, key.c_str() + slash + 1, O_PATH | O_DIRECTORY | O_CLOEXEC);
    } else {
      fd = ::open(key.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
  } else {
    fd = ::open(key.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  }
  fds_.emplace(std::move(key), fd);
  return fd;
}

}  // namespace lexpack::closure
