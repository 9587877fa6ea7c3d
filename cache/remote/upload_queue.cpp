// The queue is a plain file of hex keys, one per line, appended with one
// O_APPEND write per key (so concurrent compiles never interleave) and read
// from a remembered offset (so a line still being written waits for its
// newline).
#include "cache/remote/upload_queue.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <set>

#include "base/file_util.h"
#include "cache/orphan_files.h"
#include "cache/remote/local_copy.h"
#include "cache/remote/remote_tier.h"

namespace lexpack::cache::remote {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(50);

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Bytes of `path` from `offset` on (empty when there are none or on error).
std::string read_from(const std::string& path, uint64_t offset) {
  std::string out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(offset + out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace

bool queue_upload(const Hash128& key) {
  const char* path = std::getenv(kUploadQueueEnv);
  if (!path || !*path) return false;
  return base::append_line(path, key.hex() + "\n");  // the build made the file
}

void keep_answer_with_entry(Store& store, const Hash128& entry_key, const Hash128& answer_key,
                            std::string_view answer) {
  store.put_memo(kAnswerWithEntryTable, entry_key.hex(), answer_key.hex() + std::string(answer));
}

void upload_answer_with_entry(Store& store, RemoteTier& tier, const Hash128& entry_key,
                              const CountFn& count, std::string* note) {
  std::optional<std::string> kept = store.get_memo(kAnswerWithEntryTable, entry_key.hex());
  Hash128 answer_key;
  if (!kept || kept->size() < 32 ||
      !Hash128::from_hex(std::string_view(*kept).substr(0, 32), &answer_key)) {
    return;
  }
  tier.upload_answer(answer_key, std::string_view(*kept).substr(32), count, note);
}

std::unique_ptr<Uploader> Uploader::start(const Config& config) {
  std::string error;
  std::unique_ptr<RemoteTier> tier = RemoteTier::open(config, &error);
  if (!tier || !tier->can_write()) return nullptr;
  auto queue = make_cache_temp(config.dir, ".uploads", FileModes::from(config));
  if (!queue.ok()) return nullptr;
  std::unique_ptr<Uploader> u(new Uploader());
  u->config_ = config;
  u->queue_ = *queue;
  ::setenv(kUploadQueueEnv, u->queue_.c_str(), 1);
  u->thread_ = std::thread([raw = u.get()] { raw->run(); });
  return u;
}

Uploader::~Uploader() {
  if (!finished_) finish();
}

Uploader::Summary Uploader::finish(bool send_rest) {
  if (finished_) return summary_;
  finished_ = true;
  const int64_t begin = now_us();
  abandon_ = !send_rest;
  finish_by_us_ = begin + int64_t(kFinishBudgetMs) * 1000;
  {
    std::lock_guard<std::mutex> hold(wake_mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  ::unsetenv(kUploadQueueEnv);  // no getenv of the thread's runs now
  summary_.drain_us = now_us() - begin;
  ::unlink(queue_.c_str());
  leave_waiting();
  return summary_;
}

std::string Uploader::take_waiting() {
  const std::string waiting = config_.dir + "/" + kWaitingUploadsFile;
  const std::string mine = queue_ + ".earlier";
  if (::rename(waiting.c_str(), mine.c_str()) != 0) return "";
  std::string lines = read_from(mine, 0);
  ::unlink(mine.c_str());
  return lines;
}

void Uploader::leave_waiting() {
  summary_.waiting = later_.size();
  if (later_.empty()) return;
  const std::string waiting = config_.dir + "/" + kWaitingUploadsFile;
  // Whatever another build left meanwhile is kept too, newest last.
  std::string lines = read_from(waiting, 0);
  for (const std::string& key : later_) lines += key + "\n";
  size_t count = 0;
  for (char c : lines) count += c == '\n';
  size_t at = 0;
  for (; count > kMaxWaitingUploads; --count) at = lines.find('\n', at) + 1;
  lines.erase(0, at);
  base::write_file_atomically(waiting, lines);
}

void Uploader::run() {
  // This thread's own store and connections: the build's processes have
  // theirs, and the main thread opens none while ninja runs.
  StoreOptions options;
  options.dir = config_.dir;
  auto store = Store::open(options);
  std::string error;
  std::unique_ptr<RemoteTier> tier = RemoteTier::open(config_, &error);
  uint64_t offset = 0;
  std::string earlier = take_waiting();
  if (store.ok() && tier) {
    send(*store.value(), *tier, earlier);
  } else {
    for (size_t pos = 0; pos < earlier.size();) {  // kept for a build that can send them
      size_t nl = earlier.find('\n', pos);
      if (nl == std::string::npos) break;
      later_.push_back(earlier.substr(pos, nl - pos));
      pos = nl + 1;
    }
  }
  for (;;) {
    const bool last_round = stop_.load();  // read before draining: nothing is left behind
    if (store.ok() && tier) drain(*store.value(), *tier, &offset);
    if (last_round) break;
    std::unique_lock<std::mutex> hold(wake_mutex_);
    wake_.wait_for(hold, kPollInterval, [this] { return stop_.load(); });
  }
  if (!store.ok() || !tier) {
    // Nothing could be sent: count what the build queued as skipped.
    std::string rest = read_from(queue_, offset);
    for (char c : rest) summary_.skipped += c == '\n';
    summary_.queued += summary_.skipped;
  }
}

void Uploader::drain(Store& store, RemoteTier& tier, uint64_t* offset) {
  std::string bytes = read_from(queue_, *offset);
  size_t end = bytes.rfind('\n');
  if (end == std::string::npos) return;
  *offset += end + 1;
  bytes.resize(end + 1);
  send(store, tier, bytes);
}

bool queue_or_send(Store& store, RemoteTier& tier, const Hash128& key, const Hash128& answer_key,
                   std::string_view answer,
                   const std::function<std::optional<RemoteEntry>()>& make_entry,
                   const CountFn& count, std::string* note) {
  if (!tier.can_write()) return false;
  const char* queue = std::getenv(kUploadQueueEnv);
  if (queue && *queue) {
    if (!answer.empty()) keep_answer_with_entry(store, key, answer_key, answer);
    if (queue_upload(key)) {
      *note += "queued for the build's uploader";
      return true;
    }
  }
  // Not under `lexpack ninja`: sent here, after the outputs are in place.
  std::optional<RemoteEntry> entry = make_entry();
  if (entry && tier.upload(key, *entry, count, note) && !answer.empty()) {
    tier.upload_answer(answer_key, answer, count, note);
  }
  return false;
}

void Uploader::send(Store& store, RemoteTier& tier, const std::string& bytes) {
  auto count = [&store](std::string_view name, int64_t delta) { store.add_counter(name, delta); };
  for (size_t pos = 0; pos < bytes.size();) {
    size_t nl = bytes.find('\n', pos);
    if (nl == std::string::npos) break;
    std::string line = bytes.substr(pos, nl - pos);
    pos = nl + 1;
    Hash128 key;
    if (!Hash128::from_hex(line, &key) || !seen_.insert(line).second) continue;
    ++summary_.queued;
    if (abandon_ || now_us() > finish_by_us_.load()) {
      later_.push_back(line);
      continue;
    }
    std::optional<ActionRecord> action = store.get_action(key);
    std::optional<RemoteEntry> entry;
    if (action) entry = entry_from_store(store, *action);
    if (!entry) {
      ++summary_.skipped;
      continue;
    }
    std::string note;
    if (tier.upload(key, *entry, count, &note)) {
      ++summary_.uploaded;
      upload_answer_with_entry(store, tier, key, count, &note);
    } else {
      later_.push_back(line);  // no remote took it: the next build tries again
    }
  }
  store.flush();
}

}  // namespace lexpack::cache::remote
