// The spare files of the server: made with O_EXCL under a name of this
// process, and used only while they are still the empty regular file made
// (same device and inode, one link, no bytes), so nothing else is written.
#include "ninja_integration/server/spare_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_util.h"
#include "base/process.h"

namespace lexpack::server {

bool SpareFiles::take(const std::string& final_path, std::string_view bytes, mode_t umask,
                      std::string* path) {
  std::string dir(base::dir_of(final_path));
  wanted_.push_back(dir);
  auto it = spares_.find(dir);
  if (it == spares_.end()) return false;
  Spare spare = std::move(it->second);
  spares_.erase(it);
  int fd = ::open(spare.path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  const mode_t mode = 0666 & ~umask;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == spare.dev &&
            st.st_ino == spare.ino && st.st_nlink == 1 && st.st_size == 0 &&
            ((st.st_mode & 07777) == mode || ::fchmod(fd, mode) == 0);
  if (ok) ok = base::write_all(fd, bytes);
  if (::close(fd) != 0) ok = false;
  if (!ok) {
    ::unlink(spare.path.c_str());
    return false;
  }
  *path = std::move(spare.path);
  return true;
}

void SpareFiles::make_wanted() {
  std::vector<std::string> dirs = std::move(wanted_);
  wanted_.clear();
  for (std::string& dir : dirs) {
    if (spares_.count(dir) || spares_.size() >= kMaxDirs) continue;
    std::string path = dir + "/.lexpack-server-spare-" + std::to_string(::getpid()) + "-" +
                       std::to_string(++counter_);
    // 0666 under the umask of the last request, as the compiler opens its
    // output (under a default ACL a chmod later would give another mask).
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) continue;
    struct stat st {};
    bool ok = ::fstat(fd, &st) == 0;
    ::close(fd);
    if (!ok) {
      ::unlink(path.c_str());
      continue;
    }
    spares_[std::move(dir)] = Spare{std::move(path), st.st_dev, st.st_ino};
  }
}

void SpareFiles::remove_all() {
  for (auto& [dir, spare] : spares_) ::unlink(spare.path.c_str());
  spares_.clear();
}

}  // namespace lexpack::server
