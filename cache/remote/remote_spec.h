// The `remote_storage` setting in ccache's syntax: space-separated URLs, each
// with `|key=value` attributes (read-only, connect-timeout, operation-timeout,
// first-byte-timeout, min-rate, layout, ca-file). Credentials stay in the
// spec and are masked whenever it is shown.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/config/config.h"

namespace lexpack::cache::remote {

enum class Scheme { kRedis, kHttp, kHttps };
enum class Layout { kSubdirs, kBazel };

struct RemoteSpec {
  Scheme scheme = Scheme::kRedis;
  std::string url;  // without attributes, credentials included
  std::string host;
  int port = 0;
  int db = 0;        // redis: /db
  std::string path;  // http: the URL's path, without a trailing '/'
  std::string user, password;
  Layout layout = Layout::kSubdirs;
  bool read_only = false;
  int connect_timeout_ms = 100;
  int operation_timeout_ms = 10000;
  // A remote is judged by its answers: no first byte of a reply within this
  // long, or a transfer slower than min_rate bytes/s (after a short grace),
  // and the request fails as a timeout, which marks the remote down.
  int first_byte_timeout_ms = 500;
  int64_t min_rate = 1 << 20;  // bytes per second; 0: no rate check
  std::string ca_file;         // https: the CA certificates to trust instead of the system's
};

// One URL with its attributes.
base::Result<RemoteSpec> parse_remote_spec(std::string_view text);
// The whole setting; an unusable entry is an error naming it (masked).
base::Result<std::vector<RemoteSpec>> parse_remote_storage(std::string_view text);

}  // namespace lexpack::cache::remote
