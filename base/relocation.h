// Path relocation between checkouts: an absolute path is named by its
// relation to the working directory ("../src/a.h"), so two checkouts of one
// project at different places share keys, and text the compiler wrote
// (depfiles, messages) is stored in a form any checkout can write back.
#pragma once

#include <string>
#include <string_view>

namespace lexpack::base {

// True when `path` is `dir` or lies below it (whole components; `dir` without
// a trailing slash unless it is "/").
bool path_is_under(std::string_view path, std::string_view dir);

// `path` (absolute) named from `cwd` (absolute, no "." or ".." components):
// "../" once per component of cwd past their common prefix, then the rest of
// `path` as written. "." when they are equal.
std::string relative_to(std::string_view path, std::string_view cwd);

// The byte that opens a relocated reference in stored text; text holding it
// is never relocated (relocate_text refuses it).
inline constexpr std::string_view kRelocationMarker = "\x01lexpack-rel:";

// Every absolute path in `text` that lies under `base_dir` has the part it
// shares with `cwd` replaced by a reference "<marker><levels>\x01" meaning
// "the working directory `levels` components up". False when `text` already
// holds the marker or still names base_dir after the rewrite (a path written
// in an escaped form), so the caller must not store it as relocatable.
bool relocate_text(std::string_view text, std::string_view base_dir, std::string_view cwd,
                   std::string* out);

// The inverse in another (or the same) working directory. Text without a
// reference comes back unchanged. False on a malformed reference.
bool restore_text(std::string_view text, std::string_view cwd, std::string* out);

}  // namespace lexpack::base
