// Writing outputs the way a compile must appear to Ninja: a reader sees the
// old file or the complete new one, never a torn one (temp file + rename, or
// the old file left as it is when it already holds the new bytes).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/file_stat.h"

namespace lexpack::launcher {

// Writes `bytes` to `path` through a temporary file beside it. False with
// *err set on failure (nothing is left behind).
// `mode` is the creation mode before the umask (0777 for an executable).
// With `vouched`, the file is stamped so that any later write to it changes
// its stat signature, and *vouched gets the signature it has once written:
// while a stat of `path` gives exactly that signature, the file holds `bytes`
// (output_files.cpp says why). Left empty where the stamp cannot be relied on
// (a filesystem that is not local or keeps coarse times, a file not ours).
bool write_file_atomic(const std::string& path, std::string_view bytes, std::string* err,
                       unsigned mode = 0666, std::optional<base::StatSignature>* vouched = nullptr);

// For a writer whose temporary file another process renames into place
// (the server's, renamed by its client): stamps the file open as `fd`, just
// written, as write_file_atomic does and gives what to check once it is
// renamed, or nullopt when it cannot be vouched for.
struct Stamped {
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t stamp = 0;
};
std::optional<Stamped> stamp_for_vouching(int fd);
// The signature of `path` when it is still the stamped file, renamed into
// place and not written since (then it holds the bytes written).
std::optional<base::StatSignature> still_stamped(const std::string& path, const Stamped& s);

// When `path` is a regular file (not a symlink) holding exactly `bytes`,
// sets its modification time to now, as rewriting it would, and returns
// true: the file a reader sees never changes. False when it is absent,
// differs or cannot be read or touched (then write it).
bool touch_if_identical(const std::string& path, std::string_view bytes);

}  // namespace lexpack::launcher
