// Uploads of one `lexpack ninja` build, off the compiles' path: a compile
// stored locally appends its key to the build's queue file and exits; one
// uploader thread of `lexpack ninja` reads the queue as it grows, rebuilds
// each entry from the local store and writes it to the remotes while the
// build goes on, then sends what is left when ninja is done, for a short
// while only: what has not gone up by then (or could not, the remotes being
// down) waits in the cache directory for the next build's uploader. A
// compile outside `lexpack ninja` (a plain compiler launcher) uploads by itself.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cache/config/config.h"
#include "cache/hash/hash.h"
#include "cache/remote/remote_entry.h"
#include "cache/remote/remote_tier.h"
#include "cache/store.h"

namespace lexpack::cache::remote {

inline constexpr const char* kUploadQueueEnv = "LEXPACK_UPLOAD_QUEUE";
// The keys that wait for the next build, in the cache directory; at most
// kMaxWaitingUploads of them (the oldest are dropped).
inline constexpr const char* kWaitingUploadsFile = "uploads-waiting";
inline constexpr size_t kMaxWaitingUploads = 20000;
// How long the end of a build waits for uploads.
inline constexpr int kFinishBudgetMs = 300;

// Launcher side: appends `key` to the queue named by LEXPACK_UPLOAD_QUEUE.
// False when there is no queue (or it cannot be written): upload directly.
bool queue_upload(const Hash128& key);

// An answer that goes up with an entry (the closure memo of the compile that
// made it, closure/remote_memo.h): kept in the local store under the entry's
// key until the entry is uploaded, then put in the remote under its own key.
inline constexpr std::string_view kAnswerWithEntryTable = "answer-with-entry";
void keep_answer_with_entry(Store& store, const Hash128& entry_key, const Hash128& answer_key,
                            std::string_view answer);
// Uploads what keep_answer_with_entry() kept for `entry_key`, if anything.
void upload_answer_with_entry(Store& store, RemoteTier& tier, const Hash128& entry_key,
                              const CountFn& count, std::string* note);

// A stored entry and the answer that goes with it (may be empty) on their
// way to the remotes, when `tier` can write: under `lexpack ninja` the answer
// is kept beside the entry and the key queued for the build's uploader
// (true); else the entry `make_entry` gives is sent now, then the answer.
bool queue_or_send(Store& store, RemoteTier& tier, const Hash128& key, const Hash128& answer_key,
                   std::string_view answer,
                   const std::function<std::optional<RemoteEntry>()>& make_entry,
                   const CountFn& count, std::string* note);

class Uploader {
 public:
  struct Summary {
    uint64_t queued = 0;    // keys read from the queue
    uint64_t uploaded = 0;  // entries written to at least one remote
    uint64_t skipped = 0;   // gone from the local store
    uint64_t waiting = 0;   // not sent: they wait for the next build
    int64_t drain_us = 0;   // time finish() waited after the build
  };

  // Null unless `config` names a remote that can be written. Creates the
  // queue in the cache's tmp/, sets LEXPACK_UPLOAD_QUEUE for the build and
  // starts the thread. The thread reads the environment (the store's
  // configuration, libcurl's proxies): the process must not change it until
  // finish(), which unsets the variable once the thread stopped.
  static std::unique_ptr<Uploader> start(const Config& config);
  ~Uploader();

  // Sends what is still queued for at most kFinishBudgetMs (not at all when
  // `send_rest` is false: an interrupted build does not wait for uploads),
  // leaves the rest waiting for the next build, stops the thread, removes
  // the queue and unsets the variable.
  Summary finish(bool send_rest = true);

 private:
  Uploader() = default;
  void run();
  // Uploads the complete lines of the queue after *offset; advances it.
  void drain(Store& store, class RemoteTier& tier, uint64_t* offset);
  // Uploads the keys of `lines` (hex, one per line) not sent yet; past the
  // finish budget, or when no remote took one, they are kept for later.
  void send(Store& store, class RemoteTier& tier, const std::string& lines);
  // Takes the keys earlier builds left waiting (none when another build has them).
  std::string take_waiting();
  // Appends the keys kept for later to the waiting file, bounded.
  void leave_waiting();

  Config config_;
  std::string queue_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  // Wakes the thread between its polls of the queue once stop_ is set, so
  // that a build's end waits for no poll interval.
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  std::atomic<bool> abandon_{false};
  std::atomic<int64_t> finish_by_us_{INT64_MAX};
  std::set<std::string> seen_;
  std::vector<std::string> later_;
  Summary summary_;
  bool finished_ = false;
};

}  // namespace lexpack::cache::remote
