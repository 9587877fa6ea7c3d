// Which cached actions the last `lexpack ninja` build used, of the cache and
// of each build directory: the launcher appends the key of every hit and every
// stored compile to a file named by LEXPACK_BUILD_RECORD, and `lexpack export
// --working-set [-C BUILD]` reads it back.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "cache/cache_files.h"
#include "cache/store.h"

namespace lexpack::ninja_integration {

inline constexpr const char* kBuildRecordEnv = "LEXPACK_BUILD_RECORD";

// <cache dir>/builds/last.keys: the record of the last build that used the cache.
std::string last_build_record(const std::string& cache_dir);
// <cache dir>/builds/dir-<hash>.keys: the record of the last build of
// `build_dir` (absolute) that used the cache.
std::string build_dir_record(const std::string& cache_dir, const std::string& build_dir);

// Creates a record for a build of `build_dir` (absolute) starting now
// (<cache dir>/builds/<pid>.keys), its first line naming the directory, and
// returns its path. Never through a symlink; created with the modes of the
// umask setting.
base::Result<std::string> start_build_record(const std::string& cache_dir,
                                             const std::string& build_dir,
                                             const cache::FileModes& modes = {});

// After the build: a record with keys becomes last.keys and its build
// directory's record; one without (a build that compiled nothing) is removed
// and the previous records stay.
base::Status finish_build_record(const std::string& cache_dir, const std::string& record,
                                 const std::string& build_dir);

// Appends `key` to the record named by LEXPACK_BUILD_RECORD, if set. One
// O_APPEND write per key, so concurrent compiles never interleave; failures
// are ignored (the record is a convenience, never a reason to fail a compile).
void note_build_use(const cache::ActionKey& key);

// Appends why a compile of the build missed (the launcher's cause: "changed:
// PATH", "never compiled with these arguments", ...) with its output
// (absolute) to that record, for `lexpack explain -C BUILD`: a comment line,
// which read_build_record() passes over.
void note_build_miss(const std::string& output, std::string_view cause);

// The misses a record names, in the order the build met them.
struct BuildMiss {
  std::string output;  // absolute
  std::string cause;
};
base::Result<std::vector<BuildMiss>> read_build_misses(const std::string& path);

// The keys in a record, in first-use order, without repeats; *build_dir, when
// given, the directory it was built in ("" for a record without one).
base::Result<std::vector<cache::ActionKey>> read_build_record(const std::string& path,
                                                              std::string* build_dir = nullptr);

}  // namespace lexpack::ninja_integration
