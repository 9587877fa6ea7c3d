// Where GNU ld looks for the libraries a shared library needs beyond the
// command line: the library's own DT_RUNPATH (or DT_RPATH), read here from
// its dynamic section so that the directories can be search candidates.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace lexpack::link {

// The DT_RUNPATH and DT_RPATH directories of the 64-bit little-endian ELF
// file at `path`, in order, "$ORIGIN" and "${ORIGIN}" replaced by the
// directory of `path`. Only the headers, the dynamic section and the
// strings are read. Empty for any other file or a malformed one; nullopt
// when a run path cannot be read whole.
std::optional<std::vector<std::string>> elf_runpath_dirs(const std::string& path);

}  // namespace lexpack::link
