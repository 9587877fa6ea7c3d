// Statistics counters (hits, misses, time saved, ...) in a small shared file
// updated with atomic adds on a mapping (internal to cache/), so counting a hit
// never costs an index write transaction.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cache/cache_files.h"

namespace lexpack::cache {

class CountersFile {
 public:
  ~CountersFile();
  // Maps the file, creating or re-initializing it when absent or damaged.
  // A read-only open maps an existing file only. The file's blocks are
  // allocated before it is mapped for writing, so a full disk is an error
  // here (the caller goes on without counters), never a fault later.
  static base::Result<std::unique_ptr<CountersFile>> open(const std::string& path, bool read_only,
                                                          const FileModes& modes = {});
  base::Status add(std::string_view name, int64_t delta);
  std::map<std::string, int64_t> read_all() const;
  void reset();

  // The index file's identity and newest modification time as of the last
  // commit any process made. A file that differs was changed behind LMDB's
  // back (or a writer died between commit and record): check it.
  bool index_stamp_matches(uint64_t ino, uint64_t mtime_ns) const;
  void record_index_stamp(uint64_t ino, uint64_t mtime_ns);

 private:
  CountersFile() = default;
  std::string path_;
  char* map_ = nullptr;
  bool read_only_ = false;
};

}  // namespace lexpack::cache
