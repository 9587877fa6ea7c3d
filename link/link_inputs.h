// What a link or archive step depends on beyond its command line: the
// identity of the tools that run, the search directories a linker looks in,
// and the key over every file read plus the candidates that were missing
// before each library found through a search.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "cache/hash/hash.h"
#include "cache/store.h"
#include "closure/file_state.h"

namespace lexpack::link {

// A driver and the linker it runs: the identity hashes the driver, its
// collect2 and ld binaries, -print-search-dirs and ld's built-in SEARCH_DIRs;
// `search_dirs` are those SEARCH_DIRs in order.
struct Toolchain {
  cache::Hash128 identity;
  std::vector<std::string> search_dirs;
};

// Asked from the driver once per binary (memo table "linktool", checked
// against the stat signatures of the driver, collect2 and ld).
base::Result<Toolchain> driver_toolchain(cache::Store* store, closure::FileStates* files,
                                         const std::string& driver);

// The content hash of a program found as `name` would be run (ar, ranlib).
base::Result<cache::Hash128> program_identity(closure::FileStates* files, const std::string& name);

// The -L directories, in order, of the linker command the driver would run
// for `args` (asked with -###). Empty with an error when it cannot be read.
base::Result<std::vector<std::string>> driver_link_dirs(const std::string& driver,
                                                        const std::vector<std::string>& args);

// The files to record for a link that read `read` (its dependency file, in
// order) while searching `dirs`: every file read, and for each one found in
// a search directory, the same name (and its .so/.a sibling) in every
// directory searched before it and the sibling in its own directory.
// With `script`, a linker script may have named what was read (INCLUDE,
// INPUT, -T), which ld looks for in the working directory first and by a
// name with directories: the name under every directory before the one it
// was found in, and as it is, are recorded too.
std::vector<std::string> recorded_paths(const std::vector<std::string>& read,
                                        const std::vector<std::string>& dirs, bool script = false);

// Hashes into `h` each path's state: its content, or that it is absent.
// `*newest_ns` takes the latest mtime or ctime seen (to tell a file changed
// while the step ran). Fails when a file cannot be read.
base::Status hash_path_states(const std::vector<std::string>& paths, const std::string& cwd,
                              closure::FileStates* files, cache::Hasher* h, int64_t* newest_ns);

// The memo of one link command: the path lists hash_path_states covers, one
// per recent run with different reads (newest first).
std::string encode_records(const std::vector<std::vector<std::string>>& records);
bool decode_records(std::string_view bytes, std::vector<std::vector<std::string>>* records);

// True when `bytes` is an ar archive whose every member header has zero
// date, uid and gid (deterministic mode): the same inputs give the same bytes.
bool archive_is_deterministic(std::string_view bytes);

}  // namespace lexpack::link
