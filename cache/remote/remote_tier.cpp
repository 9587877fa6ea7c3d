// Faults are events, never errors: a refused connection, a timeout, an
// error reply or an entry that fails its checks is a miss plus a counter.
#include "cache/remote/remote_tier.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

#include "base/file_util.h"

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

std::string RemoteTier::marker_path(const std::string& dir, const RemoteSpec& spec) {
  return dir + "/remote-down-" + hash_bytes(spec.url).hex().substr(0, 16);
}

bool RemoteTier::is_down(const Remote& r) const {
  base::Result<std::string> text = base::read_file(r.marker);
  if (!text.ok()) return false;
  char* end = nullptr;
  long long until = std::strtoll(text->c_str(), &end, 10);
  return until > static_cast<long long>(time(nullptr));
}

void RemoteTier::mark_down(const Remote& r) const {
  std::string until = std::to_string(static_cast<long long>(time(nullptr)) + kDownSeconds);
  std::string tmp = r.marker + "." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  bool ok = ::write(fd, until.data(), until.size()) == ssize_t(until.size());
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), r.marker.c_str()) != 0) ::unlink(tmp.c_str());
}

void RemoteTier::failed(const Remote& r, const Reply& reply, const CountFn& count,
                        std::string* note) const {
  count(reply.outcome == Outcome::kTimeout ? "remote_timeouts" : "remote_errors", 1);
  mark_down(r);
  *note += "remote " + masked(r.spec) + " " +
           (reply.outcome == Outcome::kTimeout ? "timed out" : "failed") + " (" + reply.error +
           "), skipped for " + std::to_string(kDownSeconds) + " s; ";
}

std::optional<RemoteEntry> RemoteTier::fetch(const Hash128& key, const CountFn& count,
                                             std::string* note) {
  for (const Remote& r : remotes_) {
    if (is_down(r)) {
      *note += "remote " + masked(r.spec) + " marked down; ";
      continue;
    }
    Reply reply = r.backend->get(key.hex());
    if (reply.failed()) {
      failed(r, reply, count, note);
      continue;
    }
    if (reply.outcome != Outcome::kHit) {
      count("remote_misses", 1);
      *note += "remote " + masked(r.spec) + " miss; ";
      continue;
    }
    count("remote_bytes_in", int64_t(reply.bytes.size()));
    base::Result<RemoteEntry> entry = decode_entry(reply.bytes, key, secret_);
    if (!entry.ok()) {
      count("remote_bad_entries", 1);
      *note += "remote " + masked(r.spec) + " entry refused (" + entry.message() + "); ";
      continue;
    }
    count("remote_hits", 1);
    *note += "remote " + masked(r.spec) + " hit; ";
    return std::move(entry.value());
  }
  return std::nullopt;
}

std::vector<std::optional<RemoteEntry>> RemoteTier::fetch_many(const std::vector<Hash128>& keys,
                                                               const CountFn& count,
                                                               std::string* note) {
  constexpr size_t kBatch = 64;
  std::vector<std::optional<RemoteEntry>> found(keys.size());
  for (const Remote& r : remotes_) {
    if (is_down(r)) {
      *note += "remote " + masked(r.spec) + " marked down; ";
      continue;
    }
    std::vector<size_t> wanted;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!found[i]) wanted.push_back(i);
    }
    bool down = false;
    for (size_t begin = 0; begin < wanted.size() && !down; begin += kBatch) {
      const size_t end = std::min(wanted.size(), begin + kBatch);
      std::vector<std::string> names;
      for (size_t j = begin; j < end; ++j) names.push_back(keys[wanted[j]].hex());
      std::vector<Reply> replies = r.backend->get_many(names);
      for (size_t j = begin; j < end && !down; ++j) {
        Reply& reply = replies[j - begin];
        const Hash128& key = keys[wanted[j]];
        if (reply.failed()) {
          failed(r, reply, count, note);
          down = true;
        } else if (reply.outcome != Outcome::kHit) {
          count("remote_misses", 1);
        } else {
          count("remote_bytes_in", int64_t(reply.bytes.size()));
          base::Result<RemoteEntry> entry = decode_entry(reply.bytes, key, secret_);
          if (!entry.ok()) {
            count("remote_bad_entries", 1);
            *note += "remote " + masked(r.spec) + " entry " + key.hex() + " refused (" +
                     entry.message() + "); ";
          } else {
            count("remote_hits", 1);
            found[wanted[j]] = std::move(entry.value());
          }
        }
      }
    }
  }
  return found;
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
    if (reply.failed()) {
      failed(r, reply, count, note);
      continue;
    }
    if (reply.outcome != Outcome::kHit) {
      count("remote_answer_misses", 1);
      continue;
    }
    count("remote_bytes_in", int64_t(reply.bytes.size()));
    base::Result<std::string> answer = decode_answer(reply.bytes, key, secret_);
    if (!answer.ok()) {
      count("remote_bad_entries", 1);
      *note += "remote " + masked(r.spec) + " answer refused (" + answer.message() + "); ";
      continue;
    }
    count("remote_answer_hits", 1);
    return std::move(answer.value());
  }
  return std::nullopt;
}

bool RemoteTier::upload_answer(const Hash128& key, std::string_view answer, const CountFn& count,
                               std::string* note) {
  auto encode = [&] { return encode_answer(key, answer, secret_); };
  return put_each(key, encode, nullptr, count, note);
}

}  // namespace lexpack::cache::remote
