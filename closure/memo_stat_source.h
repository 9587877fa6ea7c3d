// Where a memo check or an absence proof gets its stat answers: the seam
// (MemoStatSource) and its default, handles on the checked directories. A
// whole-build scan or the server puts its own shared answers in their place.
#pragma once

#include <string>
#include <string_view>

#include "base/file_stat.h"
#include "base/view_map.h"

namespace lexpack::closure {

// Where a memo check gets its stat answers: by default handles on the
// checked directories; a whole-build scan shares its answers across TUs.
class MemoStatSource {
 public:
  virtual ~MemoStatSource() = default;
  // stat(2) following symlinks: false unless a regular file (a directory).
  virtual bool stat_file(std::string_view path, base::StatSignature* sig) = 0;
  virtual bool stat_dir(std::string_view path, base::StatSignature* sig) = 0;
};

// O_PATH handles on the directories of the checked paths, opened on first
// use. fstatat(handle, name) answers exactly what stat(dir/name) answers
// (symlinks followed the same way) without walking dir again for every file.
class DirHandles : public MemoStatSource {
 public:
  DirHandles() = default;
  DirHandles(const DirHandles&) = delete;
  DirHandles& operator=(const DirHandles&) = delete;
  ~DirHandles() override;

  // stat(2) of `path`, following symlinks: false unless it is a regular file.
  bool stat_file(std::string_view path, base::StatSignature* sig) override;

  // stat(2) of `path`: false unless it is a directory.
  bool stat_dir(std::string_view path, base::StatSignature* sig) override;

 private:
  bool stat_path(std::string_view path, struct stat* st);

  // `s` with a terminating NUL, in a buffer reused for every call.
  const char* terminated(std::string_view s);

  // A handle on `dir`; kMissing when no directory is there (nothing can be
  // found in it), -1 when none could be opened for another reason.
  int dir_fd(std::string_view dir);

  static constexpr int kMissing = -2;
  static constexpr size_t kMaxHandles = 256;
  base::ViewMap<int> fds_;  // looked up by view: no string built per checked file
  size_t open_ = 0;         // descriptors among them
  std::string name_;
};

}  // namespace lexpack::closure
