// Temporaries lexpack keeps inside the cache directory (tmp/<pid>-*, and
// builds/<pid>.keys of `lexpack ninja`): a process killed outright cannot
// remove its own, so clear and gc sweep those whose process is gone.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "cache/cache_files.h"

namespace lexpack::cache {

inline constexpr char kTempDirName[] = "tmp";

// Creates an empty file <dir>/tmp/<pid>-XXXXXX<suffix> (tmp/ made as needed,
// never through a symlink) and returns its path.
base::Result<std::string> make_cache_temp(const std::string& dir, const std::string& suffix,
                                          const FileModes& modes);

// Removes tmp/<pid>-* and builds/<pid>.keys whose process no longer runs
// (and that are a minute old: a pid seen from another pid namespace may be
// alive there), and any of them over a day old. Returns how many.
uint64_t sweep_leftovers(const std::string& dir);

}  // namespace lexpack::cache
