// `lexpack server`: one long-lived process per user and cache directory that
// answers hits from memory. It keeps the store open and, for every closure
// it has validated once, the inotify watches that would report any change to
// it; while none fired, a hit needs no stat of the closure. Anything it is
// unsure of is answered "miss", and the launcher takes its normal path.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace lexpack::server {

struct ServerOptions {
  std::string cache_dir;      // empty: the default (LEXPACK_DIR, ...)
  uint64_t idle_seconds = 0;  // zero: the config's server_idle
};

// Runs the server in this process until it is idle for the configured time,
// told to stop, or replaced by another version. Returns an error when it
// cannot start (another server holds the lock: not an error, it returns ok).
base::Status run_server(const ServerOptions& options);

}  // namespace lexpack::server
