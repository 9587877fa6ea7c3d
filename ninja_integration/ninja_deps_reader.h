// Reads ninja's .ninja_deps (format version 4) directly: for each output,
// the dependencies the compiler reported in its depfile, as ninja recorded
// them. `lexpack scan --check` compares them with the scanned closures.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace lexpack::ninja_integration {

// Output path -> its dependencies, paths as ninja stores them (relative to
// the build directory unless absolute). The last record of an output wins.
using NinjaDeps = std::map<std::string, std::vector<std::string>>;

// Errors name the file and the byte offset of the bad record. A truncated
// last record (ninja was killed while writing) is ignored, as ninja does.
base::Result<NinjaDeps> read_ninja_deps(const std::string& path);

}  // namespace lexpack::ninja_integration
