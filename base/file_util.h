// Reading a whole file and joining, splitting and normalizing paths the way
// the compiler spells them: small helpers every folder above base/ needs.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace lexpack::base {

// The bytes of a whole file, or an error naming the path and errno.
Result<std::string> read_file(const std::string& path);

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
