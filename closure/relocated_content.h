// A file that names an absolute path under base_dir in an include directive
// (CMake's generated cmake_pch.hxx: `#include "/checkout/include/pch.h"`)
// has other bytes in every checkout. In a relocated key such a file counts
// by its bytes with each of those directive operands written as the key
// names the path (relative to the working directory, marked), and so is
// the same in every checkout. Exact: an include directive's operand only
// chooses the file (in the closure by its relocated name and content) and
// the name the compiler records for it (covered by the prefix maps, as every
// closure path under base_dir must be). The same path anywhere else (a
// string, a comment) stays as it is, and keeps the key apart.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cache/hash/hash.h"
#include "closure/file_summary.h"

namespace lexpack::closure {

// The content a relocated key gives `bytes`: their hash with each include
// directive operand under `base_dir` renamed by `rename`. Unchanged
// (hash_bytes) when no operand lies under base_dir.
cache::Hash128 relocated_content(std::string_view bytes, std::string_view base_dir,
                                 const std::function<std::string(std::string_view)>& rename);

}  // namespace lexpack::closure
