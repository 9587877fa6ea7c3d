// Empty files the server makes while idle, one per directory a hit wrote an
// output to, so that the next hit there writes into one instead of making a
// file: on ext4, allocating the inode of a new file (its search past inodes
// freed moments ago) was a quarter of the server's CPU per hit.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "launcher/output_files.h"

namespace lexpack::server {

class SpareFiles {
 public:
  ~SpareFiles() { remove_all(); }
  // Where the directories spares were made in are listed (one per line, in
  // the server's private directory), so that a server that starts after
  // one was killed (SIGKILL leaves its spares) removes what it left: each
  // empty regular file of this user there named as the spare of a process
  // that is gone.
  void use_journal(const std::string& path);
  // Writes `bytes` into the spare of `final_path`'s directory, with the mode
  // a new file would get under `umask`, and gives its path; false (nothing
  // written) when there is none or it is no longer the file this made. Either
  // way the directory is noted for make_wanted(). With `stamped`, the file
  // written is stamped for vouching (launcher/output_files.h).
  bool take(const std::string& final_path, std::string_view bytes, mode_t umask, std::string* path,
            std::optional<launcher::Stamped>* stamped = nullptr);
  bool wants_work() const { return !wanted_.empty(); }
  // Makes a spare in each directory noted since the last call (idle work).
  void make_wanted();
  void remove_all();

 private:
  struct Spare {
    std::string path;
    dev_t dev = 0;
    ino_t ino = 0;
  };
  static constexpr size_t kMaxDirs = 512;
  std::unordered_map<std::string, Spare> spares_;  // by directory
  std::vector<std::string> wanted_;
  uint64_t counter_ = 0;
  std::string journal_;
  std::unordered_set<std::string> journaled_;  // directories listed
};

}  // namespace lexpack::server
