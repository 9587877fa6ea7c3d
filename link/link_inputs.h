// What a link or archive step depends on beyond its command line and its
// tools: the key over every file read plus the candidates that were missing
// before each library found through a search.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/hash/hash.h"
#include "cache/store.h"
#include "closure/file_state.h"

namespace lexpack::link {

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

// True for a name gcc's lto-wrapper gives the objects it compiles during a
// link ("ccXXXXXX.ltrans0.ltrans.o", "ccXXXXXX.debug.temp.o"): "cc", six
// characters, a dot and a name ending in ".o", directly in the directory
// libiberty's choose_tmpdir takes ($TMPDIR, $TMP, $TEMP, /tmp, /var/tmp,
// /usr/tmp).
bool is_lto_temporary(std::string_view path);

// Hashes into `h` each path's state: its content, or that it is absent.
// `*newest_ns` takes the latest mtime or ctime seen (to tell a file changed
// while the step ran). Fails when a file cannot be read.
// `states`, when given, takes each path's state as hashed ("absent",
// "directory" or its content's hex), for `changed_paths`.
base::Status hash_path_states(const std::vector<std::string>& paths, const std::string& cwd,
                              closure::FileStates* files, cache::Hasher* h, int64_t* newest_ns,
                              std::vector<std::string>* states = nullptr);

// The memo table of the states below, keyed by the link's command key.
inline constexpr const char* kLinkStatesTable = "link-states";

// The states of a stored run's paths (the memo "link-states"), and the
// paths whose state differs now, in order ("absent" when a path is new to
// `now_paths`), for the log and `explain`: "b.o changed".
std::string encode_path_states(const std::vector<std::string>& paths,
                               const std::vector<std::string>& states);
std::vector<std::string> changed_paths(std::string_view stored,
                                       const std::vector<std::string>& now_paths,
                                       const std::vector<std::string>& now_states);

// The memo of one link command: the path lists hash_path_states covers, one
// per recent run with different reads (newest first).
std::string encode_records(const std::vector<std::vector<std::string>>& records);
bool decode_records(std::string_view bytes, std::vector<std::vector<std::string>>* records);

// True when `bytes` is an ar archive whose every member header has zero
// date, uid and gid (deterministic mode): the same inputs give the same bytes.
bool archive_is_deterministic(std::string_view bytes);

}  // namespace lexpack::link
