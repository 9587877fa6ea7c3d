// The remotes behind the local store: looked up after a local miss, written
// after a compile. A remote that failed is skipped by every process of this
// cache directory until its "down until" marker expires, so a dead server
// costs one timeout, not one per compile.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/config/config.h"
#include "cache/function_ref.h"
#include "cache/hash/hash.h"
#include "cache/remote/backend.h"
#include "cache/remote/remote_entry.h"

namespace lexpack::cache::remote {

// Seconds a failed remote is skipped.
inline constexpr int64_t kDownSeconds = 60;

// Counts an event ("remote_hits", "remote_timeouts", "remote_bytes_in", ...).
using CountFn = std::function<void(std::string_view name, int64_t delta)>;

class RemoteTier {
 public:
  // Null when no remote is configured; also null with *error set (masked)
  // when the setting does not parse or the remote_secret is unusable.
  static std::unique_ptr<RemoteTier> open(const Config& config, std::string* error);
  ~RemoteTier();  // gives up a probe claim this process did not use

  // The first remote's valid entry for `key`. Misses, failures and invalid
  // entries are counted; `*note` says what happened, for the decision log.
  std::optional<RemoteEntry> fetch(const Hash128& key, const CountFn& count, std::string* note);
  // fetch() for many keys in batches (one round trip per batch where the
  // scheme allows: Redis MGET), for whole-build prefetch. result[i] is the
  // valid entry of keys[i] from the first remote that has one.
  std::vector<std::optional<RemoteEntry>> fetch_many(const std::vector<Hash128>& keys,
                                                     const CountFn& count, std::string* note);
  // Writes to every writable remote that is up; true when one took it.
  bool upload(const Hash128& key, const RemoteEntry& entry, const CountFn& count,
              std::string* note);

  // An answer (remote_entry.h: encode_answer) under `key`: fetched like an
  // entry from the first remote that has a valid one; uploaded to every
  // writable remote that is up.
  std::optional<std::string> fetch_answer(const Hash128& key, const CountFn& count,
                                          std::string* note);
  bool upload_answer(const Hash128& key, std::string_view answer, const CountFn& count,
                     std::string* note);
  // fetch_answer() for many keys, batched as fetch_many() is.
  std::vector<std::optional<std::string>> fetch_answers(const std::vector<Hash128>& keys,
                                                        const CountFn& count, std::string* note);

  // True when some remote is not read-only.
  bool can_write() const;

  // Where `spec`'s marker lives in cache directory `dir`.
  static std::string marker_path(const std::string& dir, const RemoteSpec& spec);

  // One line per remote of `config` marked down at or after `since` (a Unix
  // time; 0: every marker still present): when, why and until when, for the
  // build summary and `lexpack stats`.
  static std::vector<std::string> down_reports(const Config& config, int64_t since);

 private:
  struct Remote {
    RemoteSpec spec;
    std::unique_ptr<Backend> backend;
    std::string marker;
    // This process holds the claim to try the remote again after its down
    // time (marker + ".probe"): the others keep skipping it meanwhile.
    mutable bool probing = false;
  };
  bool is_down(const Remote& r) const;
  void mark_down(const Remote& r, const std::string& why) const;
  // A reply came: a remote this process was probing is up again.
  void answered(const Remote& r) const;
  // What fetch_many() and fetch_answers() take from one remote's reply.
  struct Kind {
    const char* hit_counter;
    const char* miss_counter;
    const char* what;  // "entry", "answer"
  };
  // `decode`d replies for `keys` from one remote, until it fails, decoded
  // on at most `threads` threads.
  template <typename T, typename Decode>
  std::vector<std::optional<T>> fetch_from(const Remote& r, const std::vector<Hash128>& keys,
                                           const Kind& kind, const Decode& decode,
                                           const CountFn& count, std::string* note,
                                           size_t threads) const;
  // The same from every remote that is up, the first one's valid reply winning.
  template <typename T, typename Decode>
  std::vector<std::optional<T>> fetch_each(const std::vector<Hash128>& keys, const Kind& kind,
                                           const Decode& decode, const CountFn& count,
                                           std::string* note);
  void failed(const Remote& r, const Reply& reply, const CountFn& count, std::string* note) const;
  // What a reply of `r` came to, counted: a failure (the remote marked down,
  // *note says why), a miss (`miss_counter` counted) or bytes to decode
  // (remote_bytes_in counted). All but a failure say the remote is up.
  enum class Got { kFailed, kMiss, kBytes };
  Got take_reply(const Remote& r, const Reply& reply, const char* miss_counter,
                 const CountFn& count, std::string* note) const;
  // The decoded entry or answer, or nullopt with the refusal counted
  // (remote_bad_entries) and noted as `what` refused.
  template <typename T>
  std::optional<T> accepted(const Remote& r, base::Result<T> decoded, const std::string& what,
                            const CountFn& count, std::string* note) const;
  // Puts what `encode` makes (once, when a writable remote is up; "" stores
  // nothing) under `key` on every writable remote, counting `counter` (if
  // any) per store; false when none stored it.
  bool put_each(const Hash128& key, FunctionRef<std::string()> encode, const char* counter,
                const CountFn& count, std::string* note);

  std::vector<Remote> remotes_;
  std::string secret_;  // remote_secret: entries are signed and only signed ones taken
};

}  // namespace lexpack::cache::remote
