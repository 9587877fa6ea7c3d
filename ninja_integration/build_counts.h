// What one `lexpack ninja` build did, counted by the build itself: every
// launcher run under it appends its counts to a file the build named in
// LEXPACK_BUILD_COUNTS, so concurrent builds on one cache, or a read-only
// cache, still get their own true summary.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "ninja_integration/build_summary.h"

namespace lexpack::ninja_integration {

inline constexpr const char* kBuildCountsEnv = "LEXPACK_BUILD_COUNTS";

// Creates an empty counts file for a build starting now, in $TMPDIR (or
// /tmp): a read-only cache directory cannot hold it.
base::Result<std::string> start_build_counts();

// Appends "name delta" to the file LEXPACK_BUILD_COUNTS names, if set: one
// O_APPEND write, so concurrent compiles never interleave. Failures are
// ignored (a summary is never a reason to fail a compile).
void note_build_count(std::string_view name, int64_t delta);

// Appends why a compile of the build missed, for the summary's "80 because
// include/foo.h changed": the file named by the launcher's cause ("changed:
// PATH"), "new" for a compile without a closure memo, else "other". Counted
// under kMissCausePrefix + that.
inline constexpr std::string_view kMissCausePrefix = "why:";
void note_miss_cause(std::string_view launcher_cause);
// What a summary counts a launcher's cause as: the path, "new" or "other".
std::string_view miss_cause_name(std::string_view launcher_cause);

// The sums of a counts file; nullopt when it cannot be read. A name may hold
// spaces (a path): the delta is the last word.
std::optional<Counters> read_build_counts(const std::string& path);

}  // namespace lexpack::ninja_integration
