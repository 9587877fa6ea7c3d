// Writing outputs the way a compile must appear to Ninja: a reader sees the
// old file or the complete new one, never a torn one (temp file + rename).
#pragma once

#include <string>
#include <string_view>

namespace lexpack::ninja {

// Writes `bytes` to `path` through a temporary file beside it. False with
// *err set on failure (nothing is left behind).
bool write_file_atomic(const std::string& path, std::string_view bytes, std::string* err);

}  // namespace lexpack::ninja
