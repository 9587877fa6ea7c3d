// Uploads of one `lexpack ninja` build, off the compiles' path: a compile
// stored locally appends its key to the build's queue file and exits; one
// uploader thread of `lexpack ninja` reads the queue as it grows, rebuilds
// each entry from the local store and writes it to the remotes while the
// build goes on, then sends what is left when ninja is done. A compile
// outside `lexpack ninja` (a plain compiler launcher) uploads by itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "cache/config.h"
#include "cache/hash.h"
#include "cache/remote/remote_entry.h"
#include "cache/store.h"

namespace lexpack::cache::remote {

inline constexpr const char* kUploadQueueEnv = "LEXPACK_UPLOAD_QUEUE";

// Launcher side: appends `key` to the queue named by LEXPACK_UPLOAD_QUEUE.
// False when there is no queue (or it cannot be written): upload directly.
bool queue_upload(const Hash128& key);

class Uploader {
 public:
  struct Summary {
    uint64_t queued = 0;    // keys read from the queue
    uint64_t uploaded = 0;  // entries written to at least one remote
    uint64_t skipped = 0;   // gone from the local store, or no remote up
    int64_t drain_us = 0;   // time finish() waited after the build
  };

  // Null unless `config` names a remote that can be written. Creates the
  // queue in the cache's tmp/, sets LEXPACK_UPLOAD_QUEUE for the build and
  // starts the thread.
  static std::unique_ptr<Uploader> start(const Config& config);
  ~Uploader();

  // Sends what is still queued (unless `send_rest` is false: an interrupted
  // build does not wait for uploads), stops the thread, removes the queue
  // and unsets the variable.
  Summary finish(bool send_rest = true);

 private:
  Uploader() = default;
  void run();
  // Uploads the complete lines of the queue after *offset; advances it.
  void drain(Store& store, class RemoteTier& tier, uint64_t* offset);

  Config config_;
  std::string queue_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> abandon_{false};
  Summary summary_;
  bool finished_ = false;
};

}  // namespace lexpack::cache::remote
