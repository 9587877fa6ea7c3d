// The bounded trust of stat_recheck.h: one signature per file, shared by
// every entry resting on it, and a count of the changes seen, so a file
// statted once per interval untrusts every entry that saw it otherwise.
#include "server/stat_recheck.h"

#include <algorithm>

namespace lexpack::server {

StatRecheck::Ref StatRecheck::note(const std::string& path, const base::StatSignature& seen,
                                   Clock::time_point now) {
  auto [it, added] = index_.emplace(path, uint32_t(files_.size()));
  if (added) {
    files_.push_back({path, seen, now, 0});
    return {it->second, 0};
  }
  File& f = files_[it->second];
  if (!f.sig || !(*f.sig == seen)) {
    // Entries that saw the file before rest on what it no longer is.
    f.sig = seen;
    ++f.changes;
    f.statted = now;
  }
  return {it->second, f.changes};
}

bool StatRecheck::still_same(const std::vector<Ref>& refs, Clock::time_point now,
                             Clock::time_point* due) {
  Clock::time_point next = now + kInterval;
  for (const Ref& r : refs) {
    File& f = files_[r.file];
    if (now - f.statted >= kInterval) {
      std::optional<base::StatSignature> sig;
      if (base::StatSignature s; base::stat_file(f.path, &s)) sig = s;
      if (sig != f.sig) {
        f.sig = sig;
        ++f.changes;
      }
      f.statted = now;
    }
    if (f.changes != r.changes) return false;
    next = std::min(next, f.statted + kInterval);
  }
  *due = next;
  return true;
}

}  // namespace lexpack::server
