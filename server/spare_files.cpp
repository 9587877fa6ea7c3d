// The spare files of the server: made with O_EXCL under a name of this
// process, and used only while they are still the empty regular file made
// (same device and inode, one link, no bytes), so nothing else is written.
#include "server/spare_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/file_util.h"
#include "base/process.h"

namespace lexpack::server {
namespace {

constexpr std::string_view kSparePrefix = ".lexpack-server-spare-";

// The pid in a spare's name (".lexpack-server-spare-<pid>-<n>"), or 0.
pid_t spare_owner(std::string_view name) {
  if (!name.starts_with(kSparePrefix)) return 0;
  name.remove_prefix(kSparePrefix.size());
  pid_t pid = 0;
  size_t i = 0;
  for (; i < name.size() && i < 10 && name[i] >= '0' && name[i] <= '9'; ++i) {
    pid = pid * 10 + (name[i] - '0');
  }
  return i < name.size() && name[i] == '-' ? pid : 0;
}

// The spares in `dir` that a server now gone left (this user's, empty).
void remove_left_spares(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (struct dirent* e = ::readdir(d)) {
    pid_t pid = spare_owner(e->d_name);
    if (pid <= 0 || pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    struct stat st {};
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        st.st_size == 0 && st.st_nlink == 1 && st.st_uid == ::geteuid()) {
      ::unlinkat(::dirfd(d), e->d_name, 0);
    }
  }
  ::closedir(d);
}

}  // namespace

void SpareFiles::use_journal(const std::string& path) {
  journal_ = path;
  if (base::Result<std::string> read = base::read_file(path); read.ok()) {
    const std::string& listed = *read;
    for (size_t at = 0; at < listed.size();) {
      size_t nl = listed.find('\n', at);
      if (nl == std::string::npos) break;
      std::string dir = listed.substr(at, nl - at);
      if (!dir.empty() && dir[0] == '/' && journaled_.insert(dir).second) remove_left_spares(dir);
      at = nl + 1;
    }
  }
  journaled_.clear();
  ::unlink(path.c_str());
}

bool SpareFiles::take(const std::string& final_path, std::string_view bytes, mode_t umask,
                      std::string* path, std::optional<launcher::Stamped>* stamped) {
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
  if (ok && stamped) *stamped = launcher::stamp_for_vouching(fd);
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
    // Listed before the first spare there (a server killed now leaves it
    // for the next one to find).
    if (!journal_.empty() && !journaled_.count(dir)) {
      int fd = ::open(journal_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      bool listed = fd >= 0 && base::write_all(fd, dir + "\n");
      if (fd >= 0) ::close(fd);
      if (!listed) continue;
      journaled_.insert(dir);
    }
    std::string path = dir + "/" + std::string(kSparePrefix) + std::to_string(::getpid()) + "-" +
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
  if (!journal_.empty()) ::unlink(journal_.c_str());
  journaled_.clear();
}

}  // namespace lexpack::server
