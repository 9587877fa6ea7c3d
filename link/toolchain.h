// The tools of a link or archive step: who runs (the driver, its collect2
// and ld, ar, ranlib), identified by their bytes, and where the linker
// searches.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "cache/hash/hash.h"
#include "cache/remote/remote_tier.h"
#include "cache/store.h"
#include "closure/file_state.h"

namespace lexpack::link {

// A driver and the linker it runs: the identity hashes the driver, its
// collect2 and ld binaries, gcc's LTO tools (lto-wrapper, lto1, the linker
// plugin) where it has them, -print-search-dirs and ld's built-in
// SEARCH_DIRs; `search_dirs` are those SEARCH_DIRs in order.
struct Toolchain {
  cache::Hash128 identity;
  // The driver has all three of gcc's LTO tools, and they are keyed: an LTO
  // link through it can be cached.
  bool lto = false;
  std::vector<std::string> search_dirs;
};

// Where a machine that never asked a driver takes another machine's answers,
// and where it sends its own; events are counted, and noted for the
// decision log.
struct ToolchainRemote {
  cache::remote::RemoteTier* tier = nullptr;
  cache::remote::CountFn count = [](std::string_view, int64_t) {};
  std::string note;
};

// Asked from the driver once per binary (memo table "linktool", checked
// against the stat signatures of the driver, collect2 and ld). With a
// remote, a driver this machine never asked is first looked up there (under
// the driver's path and bytes and the environment that steers it), and
// taken when every tool it names resolves here to the same path with the
// same bytes: no driver or linker process runs.
base::Result<Toolchain> driver_toolchain(cache::Store* store, closure::FileStates* files,
                                         const std::string& driver,
                                         ToolchainRemote* remote = nullptr);

// The content hash of a program found as `name` would be run (ar, ranlib).
base::Result<cache::Hash128> program_identity(closure::FileStates* files, const std::string& name);

// The -L directories, in order, of the linker command the driver would run
// for `args` (asked with -###). Empty with an error when it cannot be read.
base::Result<std::vector<std::string>> driver_link_dirs(const std::string& driver,
                                                        const std::vector<std::string>& args);

}  // namespace lexpack::link
