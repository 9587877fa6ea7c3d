// Reading a whole file and joining, splitting and normalizing paths the way
// the compiler spells them: small helpers every folder above base/ needs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace lexpack::base {

// The bytes of a whole file, or an error naming the path and errno.
Result<std::string> read_file(const std::string& path);

// Writes `bytes` to a file beside `path` and renames it over `path`, so that
// a reader sees the whole old file or the whole new one; `mode` for a new
// file. False (nothing left behind) on any error.
bool write_file_atomically(const std::string& path, std::string_view bytes, unsigned mode = 0644);

// Appends `line` to the existing file `path` (never created: its owner made
// it) in one O_APPEND write, so that the lines of concurrent writers never
// interleave; retries EINTR. False when the file cannot be opened or the
// write fell short.
bool append_line(const std::string& path, std::string_view line);
// The same one write to `fd`, opened with O_APPEND by the caller (kept open
// by a process that appends often).
bool append_line(int fd, std::string_view line);

// Exactly `size` bytes of `fd` from `offset` into *out, however many reads
// that takes (retrying EINTR); false on an error or an early end of file.
bool pread_all(int fd, uint64_t offset, uint64_t size, std::string* out);

// The working directory as gcc and clang name it (what -g records as the
// compile directory and prefix maps apply to): $PWD when it is absolute and
// names this directory (a path through a symlink stays as the shell spelled
// it), else the physical one; "" when neither can be read.
std::string working_dir();

// `path` made absolute against `cwd` (no normalization).
std::string absolute_path(const std::string& path, const std::string& cwd);

// `path` made absolute against `dir` and lexically normalized, exactly as
// std::filesystem::path::lexically_normal() gives it.
std::string normal_path(const std::string& path, const std::string& dir);

// dir + "/" + name, as the compiler joins them ("" is the working directory).
std::string join_path(std::string_view dir, std::string_view name);

// The directory part of a path as the compiler sees it, "" for none.
std::string_view dir_of(std::string_view path);

}  // namespace lexpack::base
