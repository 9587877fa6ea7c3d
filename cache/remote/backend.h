// One remote cache server: the four operations every scheme offers, each
// answered within the spec's timeouts and never throwing. A failure is a
// reply like any other; what to do about it is the tier's business.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/remote/remote_spec.h"

namespace lexpack::cache::remote {

enum class Outcome { kHit, kMiss, kStored, kError, kTimeout };

struct Reply {
  Outcome outcome = Outcome::kError;
  std::string bytes;  // kHit: the value
  std::string error;  // kError, kTimeout: what happened (no credentials)
  bool failed() const { return outcome == Outcome::kError || outcome == Outcome::kTimeout; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  // `key` is the entry's name (hex digits); values are opaque bytes.
  virtual Reply get(std::string_view key) = 0;
  virtual Reply put(std::string_view key, std::string_view value) = 0;
  virtual Reply exists(std::string_view key) = 0;  // kHit or kMiss
  // One reply per key, in order (one round trip where the scheme allows).
  virtual std::vector<Reply> get_many(std::span<const std::string> keys) = 0;
};

// The backend for `spec`'s scheme. Connects lazily: never fails here.
std::unique_ptr<Backend> make_backend(const RemoteSpec& spec);

}  // namespace lexpack::cache::remote
