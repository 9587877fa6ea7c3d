// Writing outputs the way a compile must appear to Ninja: a reader sees the
// old file or the complete new one, never a torn one (temp file + rename, or
// the old file left as it is when it already holds the new bytes).
#pragma once

#include <string>
#include <string_view>

namespace lexpack::launcher {

// Writes `bytes` to `path` through a temporary file beside it. False with
// *err set on failure (nothing is left behind).
// `mode` is the creation mode before the umask (0777 for an executable).
bool write_file_atomic(const std::string& path, std::string_view bytes, std::string* err,
                       unsigned mode = 0666);

// When `path` is a regular file (not a symlink) holding exactly `bytes`,
// sets its modification time to now, as rewriting it would, and returns
// true: the file a reader sees never changes. False when it is absent,
// differs or cannot be read or touched (then write it).
bool touch_if_identical(const std::string& path, std::string_view bytes);

}  // namespace lexpack::launcher
