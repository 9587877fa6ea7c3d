// How lexpack opens and creates what lives in a cache directory that other
// users may write: never through a symlink someone planted, directories by a
// checked handle, and with the modes the `umask` setting asks for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "cache/config/config.h"

namespace lexpack::cache {

struct FileModes {
  // Taken from new files (0666) and directories (0777); unset: the process
  // umask decides. Set, it wins over the process umask.
  std::optional<uint32_t> umask;
  // Follow a cache directory or packs/ that is a symlink owned by someone
  // else. One the user owns is followed anyway: they made it.
  bool follow_symlinks = false;
  static FileModes from(const Config& config) { return {config.umask, config.follow_symlinks}; }
};

// Opens the directory `name` under parent_fd (AT_FDCWD: a path) as a handle
// (O_DIRECTORY), creating it (and, for a path, its parents) when `create`.
// A symlink is refused unless the user owns it or modes.follow_symlinks.
// The caller closes the handle.
base::Result<int> open_cache_dir(int parent_fd, const std::string& name, bool create,
                                 const FileModes& modes);

// Opens `name` in dir_fd with O_NOFOLLOW and O_CLOEXEC added to flags. A file
// it creates (O_CREAT) gets 0666 minus the umask setting, whatever the
// process umask. `shown` names the file in messages.
base::Result<int> open_cache_file(int dir_fd, const std::string& name, int flags,
                                  const FileModes& modes, const std::string& shown);

// Gives a file (or directory) this process may just have created the mode
// the umask setting asks for; nothing when it is unset, or the file is
// someone else's, or it has that mode already.
void give_created_mode(int fd, bool is_dir, const FileModes& modes);

// Gives the first `size` bytes of a file real blocks (fallocate(2), which
// never changes bytes that are there, so other processes may use the file
// meanwhile): 0, or the errno, ENOSPC on a full disk. A filesystem without
// fallocate counts as success (glibc's fallback would write zeros over a
// live file).
int allocate_blocks(int fd, int64_t size);

// For files another library creates by path (LMDB's index and lock file):
// creates `path` like open_cache_file if it is absent (unless read_only) and
// fails if it is a symlink or not a regular file. *ino receives its inode
// (left alone when a read-only cache lacks the file).
base::Status prepare_cache_file(const std::string& path, const FileModes& modes, bool read_only,
                                uint64_t* ino);

}  // namespace lexpack::cache
