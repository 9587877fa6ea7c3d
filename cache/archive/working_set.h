// The working set of one build as an archive: only the given action records
// and the blobs they refer to, in the same format as export_archive, so
// `lexpack import` restores it like a full export.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "cache/store.h"

namespace lexpack::cache {

struct WorkingSetReport {
  uint64_t actions = 0;          // action records written
  uint64_t blobs = 0;            // distinct blobs written
  uint64_t blob_bytes = 0;       // their total size
  uint64_t missing_actions = 0;  // keys the cache no longer holds (evicted or cleared)
};

// Copies the actions and their blobs into a scratch store beside `file` and
// exports that, then removes the scratch store. An action whose blobs are
// gone is left out and counted as missing.
base::Result<WorkingSetReport> export_working_set(Store& store, const std::vector<ActionKey>& keys,
                                                  const std::string& file);

}  // namespace lexpack::cache
