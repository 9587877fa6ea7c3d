// Faults are events, never errors: a refused connection, a timeout, an
// error reply or an entry that fails its checks is a miss plus a counter.
#include "cache/remote/remote_tier.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <ctime>
#include <mutex>
#include <thread>

#include "base/file_util.h"
#include "base/run_on_threads.h"

namespace lexpack::cache::remote {
namespace {

std::string masked(const RemoteSpec& spec) {
  return mask_credentials(spec.url);
}

}  // namespace

std::unique_ptr<RemoteTier> RemoteTier::open(const Config& config, std::string* error) {
  if (config.remote_storage.empty()) return nullptr;
  if (!config.remote_secret_error.empty()) {
    *error = config.remote_secret_error;
    return nullptr;
  }
  auto specs = parse_remote_storage(config.remote_storage);
  if (!specs.ok()) {
    *error = "remote_storage: " + specs.message();
    return nullptr;
  }
  if (specs.value().empty()) return nullptr;
  auto tier = std::unique_ptr<RemoteTier>(new RemoteTier());
  tier->secret_ = config.remote_secret;
  for (RemoteSpec& s : specs.value()) {
    Remote r;
    r.marker = marker_path(config.dir, s);
    r.backend = make_backend(s);
    r.spec = std::move(s);
    tier->remotes_.push_back(std::move(r));
  }
  return tier;
}

RemoteTier::~RemoteTier() {
  for (const Remote& r : remotes_) {
    if (r.probing) ::unlink((r.marker + ".probe").c_str());
  }
}

std::string RemoteTier::marker_path(const std::string& dir, const RemoteSpec& spec) {
  return dir + "/remote-down-" + hash_bytes(spec.url).hex().substr(0, 16);
}

namespace {

// A marker holds "<until> <since>\n<why>\n": Unix times, then the reason.
struct Marker {
  long long until = 0, since = 0;
  std::string why;
};

std::optional<Marker> read_marker(const std::string& path) {
  base::Result<std::string> text = base::read_file(path);
  if (!text.ok()) return std::nullopt;
  Marker m;
  char* end = nullptr;
  m.until = std::strtoll(text->c_str(), &end, 10);
  m.since = std::strtoll(end, &end, 10);
  size_t nl = text->find('\n');
  if (nl != std::string::npos) {
    m.why = text->substr(nl + 1);
    while (!m.why.empty() && m.why.back() == '\n') m.why.pop_back();
  }
  return m;
}

std::string clock_time(long long t) {
  char buf[32];
  time_t tt = static_cast<time_t>(t);
  struct tm tm_local;
  localtime_r(&tt, &tm_local);
  strftime(buf, sizeof buf, "%H:%M:%S", &tm_local);
  return buf;
}

// A probe claim older than this is a prober that died: taken over.
constexpr long long kStaleProbeSeconds = 30;

}  // namespace

bool RemoteTier::is_down(const Remote& r) const {
  std::optional<Marker> m = read_marker(r.marker);
  if (!m) return false;
  const long long now = static_cast<long long>(time(nullptr));
  if (m->until > now) return true;
  if (r.probing) return false;
  // Down time over: one process tries again, the others wait for its answer.
  const std::string probe = r.marker + ".probe";
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      r.probing = true;
      return false;
    }
    struct stat st;
    if (errno != EEXIST || ::stat(probe.c_str(), &st) != 0) return false;
    if (now - static_cast<long long>(st.st_mtime) < kStaleProbeSeconds) return true;
    ::unlink(probe.c_str());
  }
  return true;
}

void RemoteTier::answered(const Remote& r) const {
  if (!r.probing) return;
  r.probing = false;
  ::unlink(r.marker.c_str());
  ::unlink((r.marker + ".probe").c_str());
}

void RemoteTier::mark_down(const Remote& r, const std::string& why) const {
  const long long now = static_cast<long long>(time(nullptr));
  std::string text =
      std::to_string(now + kDownSeconds) + " " + std::to_string(now) + "\n" + why + "\n";
  base::write_file_atomically(r.marker, text);
  if (r.probing) {
    r.probing = false;
    ::unlink((r.marker + ".probe").c_str());
  }
}

std::vector<std::string> RemoteTier::down_reports(const Config& config, int64_t since) {
  std::vector<std::string> out;
  auto specs = parse_remote_storage(config.remote_storage);
  if (!specs.ok()) return out;
  for (const RemoteSpec& spec : specs.value()) {
    std::optional<Marker> m = read_marker(marker_path(config.dir, spec));
    if (!m || m->since < since) continue;
    out.push_back("remote " + masked(spec) + " marked down at " + clock_time(m->since) + " (" +
                  (m->why.empty() ? "no reason recorded" : m->why) + "), skipped until " +
                  clock_time(m->until));
  }
  return out;
}

void RemoteTier::failed(const Remote& r, const Reply& reply, const CountFn& count,
                        std::string* note) const {
  count(reply.outcome == Outcome::kTimeout ? "remote_timeouts" : "remote_errors", 1);
  mark_down(r, (reply.outcome == Outcome::kTimeout ? "timed out: " : "failed: ") + reply.error);
  *note += "remote " + masked(r.spec) + " " +
           (reply.outcome == Outcome::kTimeout ? "timed out" : "failed") + " (" + reply.error +
           "), skipped for " + std::to_string(kDownSeconds) + " s; ";
}

RemoteTier::Got RemoteTier::take_reply(const Remote& r, const Reply& reply,
                                       const char* miss_counter, const CountFn& count,
                                       std::string* note) const {
  if (reply.failed()) {
    failed(r, reply, count, note);
    return Got::kFailed;
  }
  answered(r);
  if (reply.outcome != Outcome::kHit) {
    count(miss_counter, 1);
    return Got::kMiss;
  }
  count("remote_bytes_in", int64_t(reply.bytes.size()));
  return Got::kBytes;
}

template <typename T>
std::optional<T> RemoteTier::accepted(const Remote& r, base::Result<T> decoded,
                                      const std::string& what, const CountFn& count,
                                      std::string* note) const {
  if (!decoded.ok()) {
    count("remote_bad_entries", 1);
    *note += "remote " + masked(r.spec) + " " + what + " refused (" + decoded.message() + "); ";
    return std::nullopt;
  }
  return std::move(decoded.value());
}

std::optional<RemoteEntry> RemoteTier::fetch(const Hash128& key, const CountFn& count,
                                             std::string* note) {
  for (const Remote& r : remotes_) {
    if (is_down(r)) {
      *note += "remote " + masked(r.spec) + " marked down; ";
      continue;
    }
    Reply reply = r.backend->get(key.hex());
    const Got got = take_reply(r, reply, "remote_misses", count, note);
    if (got == Got::kMiss) *note += "remote " + masked(r.spec) + " miss; ";
    if (got != Got::kBytes) continue;
    std::optional<RemoteEntry> entry =
        accepted(r, decode_entry(reply.bytes, key, secret_), "entry", count, note);
    if (!entry) continue;
    count("remote_hits", 1);
    *note += "remote " + masked(r.spec) + " hit; ";
    return entry;
  }
  return std::nullopt;
}

template <typename T, typename Decode>
std::vector<std::optional<T>> RemoteTier::fetch_from(const Remote& r,
                                                     const std::vector<Hash128>& keys,
                                                     const Kind& kind, const Decode& decode,
                                                     const CountFn& count, std::string* note,
                                                     size_t threads) const {
  constexpr size_t kBatch = 64;
  constexpr size_t kDecodesPerThread = 4;  // fewer replies are decoded where they came
  std::vector<std::optional<T>> found(keys.size());
  bool down = false;
  for (size_t begin = 0; begin < keys.size() && !down; begin += kBatch) {
    const size_t end = std::min(keys.size(), begin + kBatch);
    std::vector<std::string> names;
    for (size_t i = begin; i < end; ++i) names.push_back(keys[i].hex());
    std::vector<Reply> replies = r.backend->get_many(names);
    std::vector<size_t> with_bytes;
    for (size_t i = begin; i < end && !down; ++i) {
      const Got got = take_reply(r, replies[i - begin], kind.miss_counter, count, note);
      down = got == Got::kFailed;
      if (got == Got::kBytes) with_bytes.push_back(i);
    }
    // Decoded on every core (checked, decompressed: a Boost TU's closure
    // memo is tens of kB), then taken in order.
    std::vector<std::optional<base::Result<T>>> decoded(with_bytes.size());
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t k; (k = next.fetch_add(1)) < with_bytes.size();) {
        const size_t i = with_bytes[k];
        decoded[k].emplace(decode(replies[i - begin].bytes, keys[i]));
      }
    };
    base::run_on_threads(int(std::min(threads, with_bytes.size() / kDecodesPerThread + 1)), work);
    for (size_t k = 0; k < with_bytes.size(); ++k) {
      const size_t i = with_bytes[k];
      found[i] = accepted(r, std::move(*decoded[k]), std::string(kind.what) + " " + keys[i].hex(),
                          count, note);
      if (found[i]) count(kind.hit_counter, 1);
    }
  }
  return found;
}

template <typename T, typename Decode>
std::vector<std::optional<T>> RemoteTier::fetch_each(const std::vector<Hash128>& keys,
                                                     const Kind& kind, const Decode& decode,
                                                     const CountFn& count, std::string* note) {
  std::vector<const Remote*> up;
  for (const Remote& r : remotes_) {
    if (is_down(r)) {
      *note += "remote " + masked(r.spec) + " marked down; ";
    } else {
      up.push_back(&r);
    }
  }
  // The cores shared out among the remotes asked at once.
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t decoders = std::max<size_t>(1, cores / std::max<size_t>(1, up.size()));
  if (up.size() == 1) return fetch_from<T>(*up[0], keys, kind, decode, count, note, decoders);
  // Every remote at once, so that a slow one costs its deadline once, not
  // added to the others'; the first remote's valid reply wins, as in fetch().
  std::mutex counting;
  CountFn locked_count = [&](std::string_view name, int64_t delta) {
    std::lock_guard<std::mutex> hold(counting);
    count(name, delta);
  };
  std::vector<std::vector<std::optional<T>>> each(up.size());
  std::vector<std::string> notes(up.size());
  std::vector<std::thread> threads;
  for (size_t k = 0; k < up.size(); ++k) {
    threads.emplace_back([&, k] {
      each[k] = fetch_from<T>(*up[k], keys, kind, decode, locked_count, &notes[k], decoders);
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<std::optional<T>> found(keys.size());
  for (size_t k = 0; k < up.size(); ++k) {
    *note += notes[k];
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!found[i] && each[k][i]) found[i] = std::move(each[k][i]);
    }
  }
  return found;
}

std::vector<std::optional<RemoteEntry>> RemoteTier::fetch_many(const std::vector<Hash128>& keys,
                                                               const CountFn& count,
                                                               std::string* note) {
  auto decode = [this](std::string_view bytes, const Hash128& key) {
    return decode_entry(bytes, key, secret_);
  };
  return fetch_each<RemoteEntry>(keys, {"remote_hits", "remote_misses", "entry"}, decode, count,
                                 note);
}

std::vector<std::optional<std::string>> RemoteTier::fetch_answers(const std::vector<Hash128>& keys,
                                                                  const CountFn& count,
                                                                  std::string* note) {
  auto decode = [this](std::string_view bytes, const Hash128& key) {
    return decode_answer(bytes, key, secret_);
  };
  return fetch_each<std::string>(keys, {"remote_answer_hits", "remote_answer_misses", "answer"},
                                 decode, count, note);
}

bool RemoteTier::can_write() const {
  for (const Remote& r : remotes_) {
    if (!r.spec.read_only) return true;
  }
  return false;
}

bool RemoteTier::put_each(const Hash128& key, FunctionRef<std::string()> encode,
                          const char* counter, const CountFn& count, std::string* note) {
  std::string bytes;
  bool stored = false;
  for (const Remote& r : remotes_) {
    if (r.spec.read_only || is_down(r)) continue;
    if (bytes.empty()) bytes = encode();
    if (bytes.empty()) return false;
    Reply reply = r.backend->put(key.hex(), bytes);
    if (reply.failed()) {
      failed(r, reply, count, note);
      continue;
    }
    answered(r);
    if (counter) count(counter, 1);
    count("remote_bytes_out", int64_t(bytes.size()));
    stored = true;
  }
  return stored;
}

bool RemoteTier::upload(const Hash128& key, const RemoteEntry& entry, const CountFn& count,
                        std::string* note) {
  auto encode = [&] {
    std::string bytes = encode_entry(key, entry, secret_);
    return bytes.size() > kMaxEntrySize ? std::string() : bytes;
  };
  return put_each(key, encode, "remote_uploads", count, note);
}

std::optional<std::string> RemoteTier::fetch_answer(const Hash128& key, const CountFn& count,
                                                    std::string* note) {
  for (const Remote& r : remotes_) {
    if (is_down(r)) continue;
    Reply reply = r.backend->get(key.hex());
    if (take_reply(r, reply, "remote_answer_misses", count, note) != Got::kBytes) continue;
    std::optional<std::string> answer =
        accepted(r, decode_answer(reply.bytes, key, secret_), "answer", count, note);
    if (!answer) continue;
    count("remote_answer_hits", 1);
    return answer;
  }
  return std::nullopt;
}

bool RemoteTier::upload_answer(const Hash128& key, std::string_view answer, const CountFn& count,
                               std::string* note) {
  auto encode = [&] { return encode_answer(key, answer, secret_); };
  return put_each(key, encode, nullptr, count, note);
}

}  // namespace lexpack::cache::remote
