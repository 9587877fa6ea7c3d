// Opening and creating files in a shared cache directory; see cache_files.h.
// Files directly in the cache directory are opened by path with O_NOFOLLOW:
// only a writer of its parent could swap the directory itself. packs/ and
// builds/, which any cache writer could swap, are opened as handles.
#include "cache/cache_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lexpack::cache {

namespace {

std::string errno_text(int e = errno) {
  return std::strerror(e);
}

// Sets the mode bits the umask setting asks for on something just created,
// keeping a setgid bit the directory inherited (shared group caches).
void apply_mode(int fd, mode_t base, const FileModes& modes) {
  if (!modes.umask) return;
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_uid != ::geteuid()) return;
  mode_t want = (base & ~static_cast<mode_t>(*modes.umask)) | (st.st_mode & S_ISGID);
  if ((st.st_mode & 07777) != want) ::fchmod(fd, want);
}

mode_t create_mode(mode_t base, const FileModes& modes) {
  return modes.umask ? base & ~static_cast<mode_t>(*modes.umask) : base;
}

// mkdir -p of a path's parents (symlinks among them are the user's business).
void make_parents(const std::string& path, const FileModes& modes) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    std::string parent = path.substr(0, slash);
    if (::mkdir(parent.c_str(), create_mode(0777, modes)) == 0) {
      int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0) {
        apply_mode(fd, 0777, modes);
        ::close(fd);
      }
    }
  }
}

}  // namespace

base::Result<int> open_cache_dir(int parent_fd, const std::string& name, bool create,
                                 const FileModes& modes) {
  constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  // The usual case, a directory that is there, costs one call.
  int fd = ::openat(parent_fd, name.c_str(), kFlags | O_NOFOLLOW);
  if (fd >= 0) return fd;
  if (errno == ENOENT && create) {
    bool made = ::mkdirat(parent_fd, name.c_str(), create_mode(0777, modes)) == 0;
    if (!made && errno == ENOENT && parent_fd == AT_FDCWD) {  // parents first
      make_parents(name, modes);
      made = ::mkdirat(parent_fd, name.c_str(), create_mode(0777, modes)) == 0;
    }
    if (!made && errno != EEXIST)
      return base::Status::error(name + ": cannot create: " + errno_text());
    fd = ::openat(parent_fd, name.c_str(), kFlags | O_NOFOLLOW);
    if (fd >= 0) {
      if (made) apply_mode(fd, 0777, modes);
      return fd;
    }
  }
  if (errno != ELOOP && errno != ENOTDIR) return base::Status::error(name + ": " + errno_text());
  struct stat st;
  if (::fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return base::Status::error(name + ": " + errno_text());
  }
  if (!S_ISLNK(st.st_mode)) return base::Status::error(name + ": not a directory");
  if (st.st_uid != ::geteuid() && !modes.follow_symlinks) {
    return base::Status::error(name + ": is a symbolic link owned by user " +
                               std::to_string(st.st_uid) +
                               "; not followed (set LEXPACK_FOLLOW_SYMLINKS=1 to use it)");
  }
  fd = ::openat(parent_fd, name.c_str(), kFlags);
  if (fd < 0) return base::Status::error(name + ": " + errno_text());
  return fd;
}

base::Result<int> open_cache_file(int dir_fd, const std::string& name, int flags,
                                  const FileModes& modes, const std::string& shown) {
  // O_NONBLOCK: a FIFO planted under a cache name must not hang the open.
  flags |= O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
  int fd = -1;
  bool made = false;
  if (flags & O_CREAT) {
    // Exclusive first, so a file this process made is told apart (and given
    // its mode) from one that was there; most opens find it there.
    fd = ::openat(dir_fd, name.c_str(), flags & ~(O_CREAT | O_EXCL | O_TRUNC));
    if (fd < 0 && errno == ENOENT) {
      fd = ::openat(dir_fd, name.c_str(), flags | O_EXCL, create_mode(0666, modes));
      made = fd >= 0;
      if (fd < 0 && errno == EEXIST && !(flags & O_EXCL)) {
        fd = ::openat(dir_fd, name.c_str(), flags & ~(O_CREAT | O_EXCL | O_TRUNC));
      }
    } else if (fd >= 0 && (flags & O_EXCL)) {
      ::close(fd);
      errno = EEXIST;
      fd = -1;
    }
    if (fd >= 0 && !made && (flags & O_TRUNC) && ::ftruncate(fd, 0) != 0) {
      int e = errno;
      ::close(fd);
      return base::Status::error(shown + ": truncate: " + errno_text(e));
    }
  } else {
    fd = ::openat(dir_fd, name.c_str(), flags);
  }
  if (fd < 0) {
    if (errno == ELOOP) return base::Status::error(shown + ": is a symbolic link; not followed");
    return base::Status::error(shown + ": open: " + errno_text());
  }
  if (made) apply_mode(fd, 0666, modes);
  return fd;
}

int allocate_blocks(int fd, int64_t size) {
  int rc;
  while ((rc = ::fallocate(fd, 0, 0, static_cast<off_t>(size))) != 0 && errno == EINTR) {
  }
  if (rc == 0 || errno == EOPNOTSUPP) return 0;
  return errno;
}

void give_created_mode(int fd, bool is_dir, const FileModes& modes) {
  apply_mode(fd, is_dir ? 0777 : 0666, modes);
}

base::Status prepare_cache_file(const std::string& path, const FileModes& modes, bool read_only,
                                uint64_t* ino) {
  struct stat st;
  if (read_only) {
    if (::lstat(path.c_str(), &st) != 0) return {};  // absent: LMDB reports it
  } else {
    auto fd = open_cache_file(AT_FDCWD, path, O_RDWR | O_CREAT, modes, path);
    if (!fd.ok()) return fd.status();
    int rc = ::fstat(*fd, &st);
    ::close(*fd);
    if (rc != 0) return base::Status::error(path + ": fstat: " + errno_text());
  }
  if (S_ISLNK(st.st_mode)) return base::Status::error(path + ": is a symbolic link; not followed");
  if (!S_ISREG(st.st_mode)) return base::Status::error(path + ": not a regular file");
  if (ino) *ino = static_cast<uint64_t>(st.st_ino);
  return {};
}

}  // namespace lexpack::cache
