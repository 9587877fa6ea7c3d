// inotify hears what goes through the kernel's write paths, not a write
// through a shared mapping (the kernel only updates the file's mtime, at the
// first write fault). So the server's word for a file lasts a bounded time:
// a file a hit rests on that was not statted for kInterval is statted again
// by that hit, once for all the hits that rest on it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/file_stat.h"

namespace lexpack::server {

class StatRecheck {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr Clock::duration kInterval = std::chrono::seconds(1);

  // A file as a trusted entry rests on it: its number here and the changes
  // counted when the entry was checked.
  struct Ref {
    uint32_t file = 0;
    uint64_t changes = 0;
  };
  // Absolute `path` as a check found it just now (`seen`: its signature).
  Ref note(const std::string& path, const base::StatSignature& seen, Clock::time_point now);
  // Whether every file of `refs` is still as its entry saw it; those not
  // statted within kInterval are statted now. *due: when the earliest of
  // them must be statted again (the entry's next look here).
  bool still_same(const std::vector<Ref>& refs, Clock::time_point now, Clock::time_point* due);
  size_t size() const { return files_.size(); }

 private:
  struct File {
    std::string path;
    std::optional<base::StatSignature> sig;  // nullopt: missing when last statted
    Clock::time_point statted;
    uint64_t changes = 0;
  };
  std::vector<File> files_;
  std::unordered_map<std::string, uint32_t> index_;
};

}  // namespace lexpack::server
