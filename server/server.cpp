// The server loop: one listener, the hits waiting for their client's
// acknowledgement, idle work when nothing waits, and leaving when idle, told
// to, or orphaned; and the checks that bound what it believes (whose view of
// the files a client has, how long inotify's word lasts without a stat).
#include "server/server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>

#include "base/file_util.h"
#include "base/heap_pages.h"
#include "base/process.h"
#include "cache/config/config.h"
#include "cache/store.h"
#include "server/protocol.h"
#include "server/server_state.h"

namespace lexpack::server {
namespace {

void set_timeouts(int fd, int ms) {
  struct timeval tv {};
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

void finish_pending(PendingHit& p) {
  for (const std::string& t : p.temps) ::unlink(t.c_str());
  ::close(p.fd);
}

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// Finishes the pending hits whose client answered or hung up (`polled`: the
// listener, then one entry per pending hit), and those past their deadline
// (all of them when `all`, waiting for each first). The outputs of those
// whose client renamed them (it answered "ok") are added to *renamed.
void settle(std::vector<PendingHit>* pending, const std::vector<pollfd>& polled, bool all,
            std::vector<PendingHit::Output>* renamed) {
  const auto now = std::chrono::steady_clock::now();
  std::vector<PendingHit> kept;
  for (size_t i = 0; i < pending->size(); ++i) {
    PendingHit& h = (*pending)[i];
    bool answered = i + 1 < polled.size() && polled[i + 1].revents != 0;
    if (all && !answered) {
      pollfd one{h.fd, POLLIN, 0};
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(h.deadline - now);
      ::poll(&one, 1, int(std::max<int64_t>(0, left.count())));
      answered = true;
    }
    if (answered || now >= h.deadline) {
      std::string ack;
      if (answered) recv_frame(h.fd, &ack);  // "ok", or nothing from a client that gave up
      if (ack == "ok") {
        for (PendingHit::Output& o : h.stamped) renamed->push_back(std::move(o));
      }
      finish_pending(h);
    } else {
      kept.push_back(std::move(h));
    }
  }
  *pending = std::move(kept);
}

// SIGTERM, SIGINT and SIGHUP (a logout, `kill`) end the loop like
// `--stop`, so that the spare files and the socket are removed: blocked, and
// read from the descriptor returned (-1 when that cannot be).
int leave_signals_fd() {
  sigset_t leave_signals;
  sigemptyset(&leave_signals);
  sigaddset(&leave_signals, SIGTERM);
  sigaddset(&leave_signals, SIGINT);
  sigaddset(&leave_signals, SIGHUP);
  if (::sigprocmask(SIG_BLOCK, &leave_signals, nullptr) != 0) return -1;
  return ::signalfd(-1, &leave_signals, SFD_CLOEXEC | SFD_NONBLOCK);
}

// Serves the connections of `listener` (bound at `path`) until told to stop,
// a signal, `idle` seconds without a request, or nothing left to serve; then
// finishes the pending hits, removes the socket if it is still ours and
// closes the listener.
void serve_until_done(Server& server, int listener, const std::string& path,
                      const std::string& cache_dir, uint64_t idle) {
  struct stat bound_st {};
  struct stat cache_st {};
  ::stat(path.c_str(), &bound_st);
  ::stat(cache_dir.c_str(), &cache_st);
  // A server whose cache directory was removed (a test's, a CI job's) or
  // whose socket another server took over has no one left to serve.
  auto orphaned = [&] {
    struct stat now {};
    if (::stat(path.c_str(), &now) != 0 || now.st_ino != bound_st.st_ino) return true;
    return ::stat(cache_dir.c_str(), &now) != 0 || now.st_ino != cache_st.st_ino ||
           now.st_dev != cache_st.st_dev;
  };
  constexpr int kOrphanCheckMs = 5000;
  std::vector<PendingHit> pending;
  auto idle_since = std::chrono::steady_clock::now();
  int signals = leave_signals_fd();
  for (;;) {
    std::vector<pollfd> polled;
    polled.push_back({listener, POLLIN, 0});
    int timeout_ms = int(std::min<uint64_t>(idle * 1000, kOrphanCheckMs));
    if (server.wants_idle_work()) timeout_ms = 0;
    for (const PendingHit& h : pending) {
      polled.push_back({h.fd, POLLIN, 0});
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          h.deadline - std::chrono::steady_clock::now());
      timeout_ms = std::min<int>(timeout_ms, int(std::max<int64_t>(0, left.count())) + 1);
    }
    polled.push_back({signals, POLLIN, 0});  // last: settle() reads the pending ones
    int ready = ::poll(polled.data(), polled.size(), timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (polled.back().revents & POLLIN) break;
    polled.pop_back();
    std::vector<PendingHit::Output> renamed;
    settle(&pending, polled, false, &renamed);
    if (!renamed.empty()) server.vouch(std::move(renamed));
    if (ready == 0 && server.wants_idle_work()) {
      server.idle_work();  // nothing waits
      continue;
    }
    if (ready == 0 && pending.empty() &&
        (std::chrono::steady_clock::now() - idle_since >= std::chrono::seconds(idle) ||
         orphaned())) {
      break;  // idle, or nothing left to serve
    }
    if (!(polled[0].revents & POLLIN)) continue;
    int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    idle_since = std::chrono::steady_clock::now();
    std::optional<PendingHit> hit;
    bool go_on = server.serve(fd, &hit);
    if (hit) {
      pending.push_back(std::move(*hit));
    } else {
      ::close(fd);
    }
    if (!go_on) break;
  }
  std::vector<PendingHit::Output> renamed;
  settle(&pending, {}, true, &renamed);
  server.vouch(std::move(renamed), true);
  if (signals >= 0) ::close(signals);
  // Leave the socket only if it is still ours.
  struct stat now {};
  if (::stat(path.c_str(), &now) == 0 && now.st_ino == bound_st.st_ino) ::unlink(path.c_str());
  ::close(listener);
}

}  // namespace

std::string Server::foreign_client(pid_t pid) const {
  if (!own_view_known_) return "the server cannot tell its own mount namespace";
  if (pid <= 0) return "the client's process is unknown (another pid namespace)";
  const std::string proc = "/proc/" + std::to_string(pid);
  struct stat st {};
  if (::stat((proc + "/ns/mnt").c_str(), &st) != 0) {
    return "the client's mount namespace cannot be told";
  }
  if (!same_file(st, own_mnt_)) return "the client is in another mount namespace";
  if (::stat((proc + "/root").c_str(), &st) != 0 || !same_file(st, own_root_)) {
    return "the client has another root directory";
  }
  return {};
}

void Server::note_rechecks(Entry* e, const closure::ClosureMemo& memo, const std::string& cwd) {
  // Each dependency's signature is the memo's: the check just found it so
  // (one found otherwise with the same bytes is untrusted at its next look).
  const auto now = StatRecheck::Clock::now();
  e->rechecks.clear();
  for (const auto& d : memo.dependencies) {
    const std::string& path = d.path;
    e->rechecks.push_back(rechecks_.note(
        !path.empty() && path[0] == '/' ? path : base::absolute_path(path, cwd), d.stat, now));
  }
  e->recheck_due = now + StatRecheck::kInterval;
}

bool Server::rechecked(Entry* e) {
  const auto now = StatRecheck::Clock::now();
  if (now < e->recheck_due || rechecks_.still_same(e->rechecks, now, &e->recheck_due)) return true;
  e->trusted = false;
  return false;
}

std::string Server::status_text() const {
  size_t trusted = 0;
  for (const Entry& e : entries_) trusted += e.trusted;
  return "pid " + std::to_string(::getpid()) + "\nversion " + version_ + "\ncpu_ms " +
         std::to_string(base::own_cpu_us() / 1000) + "\nentries " +
         std::to_string(entries_.size()) + "\ntrusted " + std::to_string(trusted) + "\nwatches " +
         std::to_string(watches_.watch_count()) + "\nhits " + std::to_string(hits_) + "\nmisses " +
         std::to_string(misses_) + "\nvalidations " + std::to_string(validations_) +
         "\ntrust_drops " + std::to_string(drops_) + "\nbusy_declines " +
         std::to_string(busy_declines_) + "\nforeign_declines " +
         std::to_string(foreign_declines_) + "\nscan_answers " + std::to_string(scan_answers_) +
         "\nclosures_evaluated " + std::to_string(evaluations_stored_) + "\nevaluation_ms " +
         std::to_string(evaluation_us_ / 1000) + "\nwalk_shares " +
         std::to_string(walk_shares_made_) + "\nshare_dirs_restatted " +
         std::to_string(share_dirs_restatted_) + "\nstale_shares " + std::to_string(stale_shares_) +
         "\nclosures_changed " + std::to_string(closures_changed_) + "\ndeclined_by_first " +
         std::to_string(declined_by_first_) + "\ntraces_carried " +
         std::to_string(traces_carried_) + "\ntrust_ms " + std::to_string(trust_us_ / 1000) +
         "\ncontent_trusts " + std::to_string(content_trusts_) + "\nlast_miss " + last_miss_ + "\n";
}

bool Server::serve(int fd, std::optional<PendingHit>* pending) {
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != ::geteuid()) {
    return true;  // never answer another user
  }
  set_timeouts(fd, 2000);
  std::string bytes;
  Request req;
  if (!recv_frame(fd, &bytes) || !decode_request(bytes, &req)) return true;
  Reply reply;
  // A client that sees other files under the same paths is answered
  // nothing from this server's view of them (control requests still are).
  foreign_ = foreign_client(cred.pid);
  if (req.version != version_ && foreign_.empty()) {
    reply.kind = ReplyKind::kIncompatible;
    reply.info = version_;
    send_frame(fd, encode_reply(reply));
    return false;  // a newer (or older) lexpack is in use: make room for its server
  }
  // (Nor does one of another binary there make it leave: its own server
  // would not serve this namespace either.)
  if (!foreign_.empty() && (req.version != version_ || req.kind == RequestKind::kScanAnswers ||
                            req.kind == RequestKind::kPrepare || is_closure_request(req.kind))) {
    ++foreign_declines_;
    reply.kind = ReplyKind::kInfo;
    reply.info = "declined: " + foreign_;
    reply.answers.resize(req.compiles.size());  // none known
    send_frame(fd, encode_reply(reply));
    return true;
  }
  switch (req.kind) {
    case RequestKind::kStatus:
      reply.kind = ReplyKind::kInfo;
      reply.info = status_text();
      send_frame(fd, encode_reply(reply));
      return true;
    case RequestKind::kStop:
      reply.kind = ReplyKind::kInfo;
      reply.info = "stopping";
      send_frame(fd, encode_reply(reply));
      return false;
    case RequestKind::kDropTrust:
      // The handling of a queue overflow, on demand (tests cannot overflow
      // the kernel's queue without privileges).
      drain();
      drop_all_trust();
      reply.kind = ReplyKind::kInfo;
      reply.info = "trust dropped";
      send_frame(fd, encode_reply(reply));
      return true;
    case RequestKind::kLearn:
      // No reply: the launcher does not wait (and may be gone, its
      // namespace unknown). Any client's: it only queues a check made in
      // this server's own view.
      learn(req);
      return true;
    case RequestKind::kScanAnswers:
      reply = scan_answers(req);
      send_frame(fd, encode_reply(reply));
      return true;
    case RequestKind::kClosureAgain:
      // Walked anew (the header evaluations, keyed by their files'
      // signatures, go on into the new share).
      if (walk_share_) walk_share_->outdated = true;
      ++closures_changed_;
      [[fallthrough]];
    case RequestKind::kClosure:
    case RequestKind::kClosureCheckedAfter:
      reply = evaluate_closure(req);
      send_frame(fd, encode_reply(reply));
      return true;
    case RequestKind::kPrepare:
      reply = prepare(req);
      send_frame(fd, encode_reply(reply));
      return true;
    case RequestKind::kExplain:
      reply = compile(req, nullptr);
      send_frame(fd, encode_reply(reply));
      return true;
    case RequestKind::kCompile:
      break;
  }
  // A compile that gave up waiting (a busy server) has taken its own path:
  // answering it would only write outputs no one renames.
  struct pollfd gone {};
  gone.fd = fd;
  gone.events = POLLRDHUP;
  if (::poll(&gone, 1, 0) > 0 && (gone.revents & (POLLRDHUP | POLLHUP | POLLERR))) return true;
  std::vector<std::string> temps;
  reply = compile(req, &temps);
  if (send_frame(fd, encode_reply(reply)) && !temps.empty()) {
    // The client renames the outputs, then acknowledges (or gives up): wait
    // for that beside the next requests, not before them.
    *pending =
        PendingHit{fd, std::move(temps),
                   std::chrono::steady_clock::now() + std::chrono::milliseconds(kAckTimeoutMs),
                   std::move(stamped_)};
    stamped_.clear();
    return true;
  }
  for (const std::string& t : temps) ::unlink(t.c_str());
  return true;
}

base::Status run_server(const ServerOptions& options) {
  cache::Config config = cache::load_config(options.cache_dir);
  if (config.dir.empty()) return base::Status::error("no cache directory");
  // Named as the launchers name it (client.cpp's server_cache_dir()).
  if (config.dir[0] != '/') config.dir = base::absolute_path(config.dir, base::working_dir());
  uint64_t idle = options.idle_seconds ? options.idle_seconds : config.server_idle_s;
  ::mkdir(config.dir.c_str(), 0777);
  std::string dir = server_dir(config.dir);
  if (dir.empty() || !ensure_private_dir(dir)) {
    return base::Status::error("no private directory for the server socket");
  }
  int lock = ::open((dir + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0) return base::Status::error("cannot open the server lock");
  // A server of another binary that was asked to leave lets go of the lock
  // within moments (longer on a loaded machine): wait for that, not for a
  // server that stays. (This process is detached: no build waits for it.)
  bool locked = false;
  for (int i = 0; i < 200 && !(locked = ::flock(lock, LOCK_EX | LOCK_NB) == 0); ++i) {
    ::usleep(50 * 1000);
  }
  if (!locked) {
    ::close(lock);
    return base::Status();  // another server runs for this cache directory
  }
  // A failure to start is noted for the launchers (start_server), which
  // would otherwise try again on every compile.
  auto failed = [&dir](const std::string& why) {
    write_new_file(start_failed_path(dir), why + "\n");
    return base::Status::error(why);
  };
  ::unlink(start_failed_path(dir).c_str());
  // Each request's memos and snapshots (hundreds of kB) reuse the blocks of
  // the one before, where glibc would map and fault in new ones.
  base::reuse_freed_heap_blocks(size_t(256) << 20);
  cache::StoreOptions store_options;
  store_options.dir = config.dir;
  auto store = cache::Store::open(store_options);
  if (!store.ok()) return failed("cache: " + store.message());
  Server server(std::move(store.value()));
  std::string err;
  if (!server.init(&err)) return failed(err);
  server.use_dir(dir);  // and what a server killed before left behind is removed

  std::string path = socket_path(dir);
  int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un addr {};
  addr.sun_family = AF_UNIX;
  if (listener < 0 || path.size() >= sizeof addr.sun_path) {
    return base::Status::error("cannot create the server socket");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ::unlink(path.c_str());
  mode_t old = ::umask(077);
  int bound = ::bind(listener, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr);
  ::umask(old);
  if (bound != 0 || ::chmod(path.c_str(), 0600) != 0 || ::listen(listener, 256) != 0) {
    ::close(listener);
    return failed(std::string("cannot listen on the server socket: ") + std::strerror(errno));
  }
  server.set_listener(listener);
  serve_until_done(server, listener, path, config.dir, idle);
  ::close(lock);
  return base::Status();
}

}  // namespace lexpack::server
