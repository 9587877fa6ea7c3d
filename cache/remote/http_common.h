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

// A backend of one request per operation (GET, PUT, HEAD of the entry's
// path): the plain and the https one differ only in how a request goes out.
class PerKeyBackend : public Backend {
 public:
  Reply get(std::string_view key) override { return request("GET", key, nullptr); }
  Reply put(std::string_view key, std::string_view value) override {
    return request("PUT", key, &value);
  }
  Reply exists(std::string_view key) override { return request("HEAD", key, nullptr); }
  std::vector<Reply> get_many(std::span<const std::string> keys) override {
    return get_each(*this, keys);
  }

 protected:
  // `body` only for PUT.
  virtual Reply request(const char* method, std::string_view key, const std::string_view* body) = 0;
};

}  // namespace lexpack::cache::remote
