// Export and import: the whole cache as one file and back, so CI can move it
// as a single artifact. They go through the store's entry-level access
// (Store::list_entries and the like), so the store knows nothing of archives.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "cache/store.h"

namespace lexpack::cache {

struct ImportReport {
  uint64_t blobs = 0;
  uint64_t files = 0;
  uint64_t actions = 0;
  uint64_t memos = 0;
  bool signed_archive = false;     // the archive carries a signature
  bool signature_checked = false;  // ... and it matched the secret
};

// Import checks every blob and record and writes only through the store,
// never to a path named by the file; it stores all of it or nothing.
// Checksums prove integrity, not origin: with a secret set
// (Store::archive_secret), export signs and import refuses what it did not
// sign.
base::Status export_archive(Store& store, const std::string& file);
base::Result<ImportReport> import_archive(Store& store, const std::string& file);

}  // namespace lexpack::cache
