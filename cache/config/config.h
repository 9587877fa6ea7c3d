// Where the cache lives and how it is tuned: LEXPACK_* environment variables
// override a `key = value` file (lexpack.conf) in the cache directory, which
// overrides built-in defaults. Each effective value remembers its source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace lexpack::cache {

inline constexpr uint64_t kDefaultMaxSize = 5'000'000'000ull;
inline constexpr uint64_t kDefaultPackSize = 256ull << 20;
inline constexpr uint64_t kMinPackSize = 64ull << 10;
inline constexpr uint64_t kMaxPackSize = 4ull << 30;
inline constexpr char kConfigFileName[] = "lexpack.conf";

struct ConfigEntry {
  std::string key;     // "dir", "max_size", "pack_size", "sync", "umask", ...
  std::string value;   // as shown to the user
  std::string source;  // "default", "environment LEXPACK_MAXSIZE", "<file>:<line>", ...
};

struct Config {
  std::string dir;
  uint64_t max_size = kDefaultMaxSize;
  uint64_t pack_size = kDefaultPackSize;
  bool sync = false;  // fsync the index on every commit
  // Mode bits taken away from everything lexpack creates in the cache (files
  // 0666, directories 0777); unset: the process umask decides. `002` with a
  // setgid group directory shares a cache within a group.
  std::optional<uint32_t> umask;
  // The secret that signs archives (and remote entries): empty for none.
  std::string remote_secret;
  // A remote_secret that was set and is unusable: the remote tier stays off
  // (a reader that believes it checks signatures must not take unsigned
  // entries), and this says why.
  std::string remote_secret_error;
  // LEXPACK_FOLLOW_SYMLINKS only (lexpack.conf lives in the directory it would
  // vouch for): use a cache directory or packs/ that is a symlink someone else owns.
  bool follow_symlinks = false;
  uint64_t server_idle_s = 15 * 60;  // `lexpack server` leaves after this long unused
  // Absolute paths under it enter keys relative to the working directory, so
  // checkouts at different places share entries (empty: off).
  std::string base_dir;
  // Remote caches in ccache's syntax (cache/remote/remote_spec.h); may hold
  // credentials: shown only through mask_credentials.
  std::string remote_storage;
  // Run before the compiler on a miss (e.g. "distcc"): words split on spaces.
  std::string prefix_command;
  std::vector<ConfigEntry> entries;
  // Unusable settings that were ignored, each naming the file/variable and why.
  std::vector<std::string> warnings;
};

// LEXPACK_DIR, else $XDG_CACHE_HOME/lexpack, else $HOME/.cache/lexpack.
// Empty when none of those variables is set.
std::string default_cache_dir();

// Resolves the directory (dir_override if non-empty) and reads its config
// file if there is one. A missing file is not an error; bad lines are warnings.
Config load_config(std::string_view dir_override);

// "5G", "500M", "64Ki", "1.5G", "123" (bytes). Decimal suffixes k/M/G/T, binary
// Ki/Mi/Gi/Ti; an optional trailing "B". nullopt on anything else or overflow.
std::optional<uint64_t> parse_size(std::string_view text);
std::string format_size(uint64_t bytes);
// "002", "0027", "22": octal, at most 0777. nullopt on anything else.
std::optional<uint32_t> parse_umask(std::string_view text);

// `text` (URLs) with every password in a URL replaced by "********".
std::string mask_credentials(std::string_view text);

}  // namespace lexpack::cache
