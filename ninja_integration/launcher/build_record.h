// Which cached actions the last `lexpack ninja` build used: the launcher
// appends the key of every hit and every stored compile to a file named by
// LEXPACK_BUILD_RECORD, and `lexpack export --working-set` reads it back.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "cache/cache_files.h"
#include "cache/store.h"

namespace lexpack::launcher {

inline constexpr const char* kBuildRecordEnv = "LEXPACK_BUILD_RECORD";

// <cache dir>/builds/last.keys: the record of the last build that used the cache.
std::string last_build_record(const std::string& cache_dir);

// Creates an empty record for a build starting now (<cache dir>/builds/<pid>.keys)
// and returns its path.
// Never through a symlink; created with the modes of the umask setting.
base::Result<std::string> start_build_record(const std::string& cache_dir,
                                             const cache::FileModes& modes = {});

// After the build: a record with keys becomes last.keys; an empty one (a
// build that compiled nothing) is removed and the previous last.keys stays.
base::Status finish_build_record(const std::string& cache_dir, const std::string& record);

// Appends `key` to the record named by LEXPACK_BUILD_RECORD, if set. One
// O_APPEND write per key, so concurrent compiles never interleave; failures
// are ignored (the record is a convenience, never a reason to fail a compile).
void note_build_use(const cache::ActionKey& key);

// The keys in a record, in first-use order, without repeats.
base::Result<std::vector<cache::ActionKey>> read_build_record(const std::string& path);

}  // namespace lexpack::launcher
