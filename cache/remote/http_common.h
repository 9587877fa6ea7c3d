// What the plain HTTP backend and the https one (through lexpack-https)
// share: where an entry lives on the server, what a status means, and
// fetching many keys one request each.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/remote/backend.h"
#include "cache/remote/remote_spec.h"

namespace lexpack::cache::remote {

// <path>/<k[0:2]>/<k[2:]> (layout=subdirs), <path>/ac/<64 hex> (layout=bazel).
std::string entry_path(const RemoteSpec& spec, std::string_view key);

// The reply for an HTTP `status` to `method` (GET, HEAD or PUT) with body
// `content`: 2xx to a PUT is stored, 200 a hit, 404 a miss, anything else an
// error naming the status.
Reply reply_for_status(std::string_view method, long status, std::string content);

// get() of each key in turn; after a failed one the rest fail alike (a
// server that does not answer is not waited for once per key).
std::vector<Reply> get_each(Backend& backend, std::span<const std::string> keys);

}  // namespace lexpack::cache::remote
