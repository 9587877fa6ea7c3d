// Whether an archive or link step's key may name the paths under base_dir
// relative to the working directory, so another checkout of the project
// shares it. A path the linker can write into the output stays absolute.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "closure/key_relocation.h"
#include "link/link_step.h"

namespace lexpack::link {

// Decides for one step from its arguments (a link's @file words included).
// Paths that only name what the step reads or writes (-o, objects and
// archives, -L, -rpath-link, linker and version scripts) may be named
// relative; one the output can record (an rpath, a soname, the dynamic
// linker, a shared library named by its path, which DT_NEEDED may hold) or
// any other argument naming base_dir keeps the whole key absolute.
closure::KeyRelocation decide_link_relocation(const LinkStep& step, const std::string& cwd,
                                              std::string_view base_dir);

// The arguments as the key hashes them: with a relocated decision, each path
// value under base_dir named relative to the working directory.
std::vector<std::string> relocated_link_args(const LinkStep& step,
                                             const closure::KeyRelocation& relocation);

// `paths` (files read, search candidates) as the key names them.
std::vector<std::string> relocated_paths(const std::vector<std::string>& paths,
                                         const closure::KeyRelocation& relocation);

// True when `bytes` hold `dir` followed by a path separator, a NUL or their
// end: an output that names a path under it.
bool bytes_name_dir(std::string_view bytes, std::string_view dir);

}  // namespace lexpack::link
