// The server loop and one request: drain inotify, then answer a compile from
// a closure still trusted (no event since it was validated by stat under its
// watches), validate a closure the store remembers, or say "miss".
#include "ninja_integration/server/server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <unordered_map>

#include "base/file_util.h"
#include "base/process.h"
#include "cache/config.h"
#include "cache/store.h"
#include "lexer/kernel.h"
#include "ninja_integration/closure/action_key.h"
#include "ninja_integration/closure/closure_memo.h"
#include "ninja_integration/closure/file_state.h"
#include "ninja_integration/command/compile_command.h"
#include "ninja_integration/compiler/compiler_identity.h"
#include "ninja_integration/launcher/action_payload.h"
#include "ninja_integration/launcher/build_record.h"
#include "ninja_integration/launcher/decision_log.h"
#include "ninja_integration/server/protocol.h"
#include "ninja_integration/server/spare_files.h"
#include "ninja_integration/server/watch_table.h"

extern char** environ;

namespace lexpack::server {
namespace {

void set_timeouts(int fd, int ms) {
  struct timeval tv {};
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

bool write_new_file(const std::string& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  bool ok = base::write_all(fd, bytes);
  if (::close(fd) != 0) ok = false;
  if (!ok) ::unlink(path.c_str());
  return ok;
}

// Variables shells, benchmark drivers and `lexpack ninja` change between runs
// that no compiler reads: they are left out of what the server remembers, so
// that `hyperfine` (a new HYPERFINE_RANDOMIZED_ENVIRONMENT_OFFSET per run), a
// subshell or each `lexpack ninja` build (its own record, counts, report and
// upload files) does not make every request a new entry. They still reach
// the request (apply_client), so a hit is recorded in this build's files.
bool bookkeeping_variable(std::string_view e) {
  static constexpr std::string_view kPerBuild[] = {
      "LEXPACK_BUILD_RECORD=", "LEXPACK_BUILD_COUNTS=", "LEXPACK_NINJA_REPORT=",
      "LEXPACK_NINJA_PID=", "LEXPACK_UPLOAD_QUEUE="};
  for (std::string_view v : kPerBuild) {
    if (e.rfind(v, 0) == 0) return true;
  }
  return e.rfind("HYPERFINE_", 0) == 0 || e.rfind("_=", 0) == 0 || e.rfind("SHLVL=", 0) == 0 ||
         e.rfind("OLDPWD=", 0) == 0;
}

// A hit whose client has yet to rename the outputs and acknowledge: the
// server goes on with other requests meanwhile and removes what is left of
// the temporaries once the client answered, hung up, or took too long.
constexpr int kAckTimeoutMs = 2000;  // as long as a client waits for its reply

struct PendingHit {
  int fd = -1;
  std::vector<std::string> temps;  // and the second names of replaced outputs
  std::chrono::steady_clock::time_point deadline;
};

void finish_pending(PendingHit& p) {
  for (const std::string& t : p.temps) ::unlink(t.c_str());
  ::close(p.fd);
}

class Server {
 public:
  explicit Server(std::unique_ptr<cache::Store> store) : store_(std::move(store)) {}
  bool init(std::string* err);
  // Serves one connection; the caller closes it unless it became *pending
  // (a hit waiting for its client's acknowledgement). False when the server
  // must leave.
  bool serve(int fd, std::optional<PendingHit>* pending);
  // Work left for a moment when no request waits: the spare files.
  bool wants_idle_work() const { return spares_.wants_work(); }
  void idle_work() { spares_.make_wanted(); }

 private:
  struct Entry {
    bool trusted = false;
    uint64_t generation = 0;
    std::string tu;
    cache::Hash128 action_key;
    bool uses_date = false;
    std::vector<WatchTable::Linked> linked;
  };
  void drain();
  void drop_all_trust();
  void apply_client(const Request& req);
  // Answers a compile, its outputs written under the names put in `temps`;
  // without `temps`, a dry run for `lexpack explain` (nothing written or
  // counted, a kInfo reply).
  Reply compile(const Request& req, std::vector<std::string>* temps);
  bool build_trust(uint32_t id, const std::string& cwd, std::string* why);
  std::string status_text() const;

  std::unique_ptr<cache::Store> store_;
  const lexer::Kernel* kernel_ = nullptr;
  std::unique_ptr<closure::FileStates> files_;
  WatchTable watches_;
  SpareFiles spares_;
  // /proc/self/mountinfo, polled: the kernel reports POLLPRI once after each
  // change of the mount table, without the file being read again.
  int mounts_fd_ = -1;
  std::vector<Entry> entries_;
  std::unordered_map<std::string, uint32_t> index_;
  std::vector<std::string> env_;  // the current client's environment (putenv keeps pointers)
  std::string version_ = protocol_version();
  uint64_t temp_counter_ = 0;
  uint64_t hits_ = 0, misses_ = 0, validations_ = 0, drops_ = 0;
  std::string last_miss_;
};

bool Server::init(std::string* err) {
  kernel_ = lexer::default_kernel(err);
  if (!kernel_) return false;
  files_ = std::make_unique<closure::FileStates>(store_.get(), kernel_);
  if (!watches_.open()) {
    *err = std::string("inotify: ") + std::strerror(errno);
    return false;
  }
  mounts_fd_ = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  return true;
}

void Server::drop_all_trust() {
  ++drops_;
  for (Entry& e : entries_) e.trusted = false;
  watches_.forget_dependencies();
}

void Server::drain() {
  bool drop = false;
  watches_.drain(
      [this](TrustRef r) {
        if (r.id < entries_.size() && entries_[r.id].generation == r.generation) {
          entries_[r.id].trusted = false;
        }
      },
      &drop);
  // A mount or unmount can put other files under a watched path without any
  // event: trust nothing from before it (nor anything when it cannot be told).
  struct pollfd mounts {};
  mounts.fd = mounts_fd_;
  mounts.events = POLLPRI;
  if (mounts_fd_ < 0 || ::poll(&mounts, 1, 0) != 0) drop = true;
  if (drop) drop_all_trust();
}

void Server::apply_client(const Request& req) {
  ::clearenv();
  env_ = req.env;
  for (std::string& e : env_) {
    if (e.find('=') != std::string::npos) ::putenv(e.data());
  }
  ::umask(req.umask);
}

bool Server::build_trust(uint32_t id, const std::string& cwd, std::string* why) {
  Entry& e = entries_[id];
  std::string bytes;
  if (!store_->visit_memo("closure", e.tu, [&](std::string_view b) { bytes.assign(b); })) {
    *why = "no closure memo";
    return false;
  }
  closure::ClosureMemo memo;
  if (!closure::decode_closure_memo(bytes, &memo)) {
    *why = "closure memo unreadable";
    return false;
  }
  ++validations_;
  e.generation++;
  e.trusted = false;
  // Watches first, then the stat check: a change after a watch exists is an
  // event, one before it is seen by the check.
  watches_.begin_pass({id, e.generation});
  auto watch = [&](const std::string& p) {
    return watches_.watch_path(base::absolute_path(p.empty() ? "." : p, cwd));
  };
  bool ok = watch(cwd);
  for (const auto& d : memo.dependencies) ok = ok && watch(d.path);
  for (const auto& d : memo.probed_dirs) {
    ok = ok && watch(d.dir);
    for (const std::string& p : d.probes) ok = ok && watch(p);
  }
  for (const std::string& d : memo.absent_dirs) ok = ok && watch(d);
  for (const auto& v : memo.vouched) {
    ok = ok && watch(v.ancestor);
    for (const std::string& d : v.dirs) ok = ok && watch(d);
  }
  if (!ok) {
    *why = "a dependency cannot be watched (watch limit, or a filesystem inotify may not hear)";
    if (errno == ENOSPC) drop_all_trust();
    return false;
  }
  std::string changed;
  cache::Hash128 key;
  bool uses_date = false;
  if (!closure::check_encoded_closure_memo(bytes, &key, &uses_date, &changed) || !changed.empty()) {
    *why = changed.empty() ? "closure memo unreadable" : "closure memo out of date: " + changed;
    return false;
  }
  e.action_key = key;
  e.uses_date = uses_date;
  e.linked = watches_.multi_linked();
  e.trusted = true;
  drain();  // whatever happened while the watches were being added
  if (!e.trusted) *why = "changed while being validated";
  return e.trusted;
}

Reply Server::compile(const Request& req, std::vector<std::string>* temps) {
  Reply miss;
  miss.kind = ReplyKind::kMiss;
  std::optional<launcher::DecisionLog> log;
  const bool dry = temps == nullptr;
  auto missed = [&](std::string why) {
    if (dry) {
      miss.kind = ReplyKind::kInfo;
      miss.info = "would decline: " + why;
      return miss;
    }
    if (log) log->write("server declined: " + why);
    ++misses_;
    last_miss_ = why;
    miss.info = std::move(why);
    return miss;
  };
  if (req.argv.empty() || req.cwd.empty() || req.cwd[0] != '/') return missed("bad request");
  if (::chdir(req.cwd.c_str()) != 0) return missed("cannot enter the working directory");
  apply_client(req);
  drain();
  if (const char* d = std::getenv("LEXPACK_DISABLE"); d && *d && std::string_view(d) != "0") {
    return missed("LEXPACK_DISABLE is set");
  }
  command::CompileCommand cmd = command::parse_compile_command(req.argv);
  if (!dry) {
    log.emplace();  // the client's LEXPACK_LOGFILE
    log->set_subject(cmd.source.empty() ? cmd.compiler : cmd.source);
  }
  if (!cmd.uncacheable.empty()) return missed("uncacheable");
  auto identity = compiler::compiler_identity(store_.get(), cmd.compiler);
  if (!identity.ok() || identity->kind == compiler::CompilerKind::kUnknown) {
    return missed("compiler unknown");
  }
  cache::Hash128 tu = closure::translation_unit_key(*identity, cmd, req.cwd);
  // The whole environment is part of what the server remembers: a variable
  // the key does not cover can still not make it serve the wrong entry.
  std::string env_bytes;
  for (const std::string& e : req.env) {
    if (!bookkeeping_variable(e)) env_bytes += e + '\0';
  }
  std::string name = tu.hex() + cache::hash_bytes(env_bytes).hex();
  auto [it, added] = index_.emplace(name, uint32_t(entries_.size()));
  if (added) {
    entries_.push_back({});
    entries_.back().tu = tu.hex();
  }
  uint32_t id = it->second;
  if (!entries_[id].trusted) {
    std::string why;
    if (!build_trust(id, req.cwd, &why)) return missed(why);
  }
  Entry& e = entries_[id];
  for (const WatchTable::Linked& l : e.linked) {
    base::StatSignature now;
    if (!base::stat_file(l.path, &now) || !(now == l.stat)) {
      e.trusted = false;
      return missed("a file with several links changed: " + l.path);
    }
  }
  cache::Hash128 key = e.uses_date ? closure::dated_key(e.action_key) : e.action_key;
  std::optional<cache::ActionRecord> action = store_->get_action(key);
  if (!action) return missed("no cached result for this key");
  std::string changed;
  if (action->exit_code != 0 ||
      !launcher::check_encoded_payload(action->payload, files_.get(), req.cwd, &changed) ||
      !changed.empty()) {
    return missed("cached entry unusable here");
  }
  auto blob = [this](const cache::BlobId& b) -> std::optional<std::string_view> {
    if (b.is_zero()) return std::string_view();
    return store_->get_blob(b);
  };
  std::optional<std::string_view> out = blob(action->stdout_blob);
  std::optional<std::string_view> err = blob(action->stderr_blob);
  if (!out || !err) return missed("output blobs missing");
  bool have_object = false, have_depfile = false;
  Reply hit;
  hit.kind = ReplyKind::kHit;
  for (const auto& o : action->outputs) {
    std::string target;
    if (o.role == "object") {
      target = cmd.output;
      have_object = true;
    } else if (o.role == "dwo" && cmd.split_dwarf) {
      target = cmd.dwo_output;
    } else if (o.role == "depfile" && cmd.wants_depfile) {
      target = cmd.depfile;
      have_depfile = true;
    } else {
      continue;
    }
    std::optional<std::string_view> bytes = store_->get_blob(o.blob);
    if (!bytes) return missed("output blob missing");
    if (dry) continue;
    std::string final_path = base::absolute_path(target, req.cwd);
    std::string temp;
    if (!spares_.take(final_path, *bytes, req.umask, &temp)) {
      temp = final_path + ".lexpack-server-" + std::to_string(::getpid()) + "-" +
             std::to_string(++temp_counter_);
      if (!write_new_file(temp, *bytes)) return missed("cannot write " + temp);
    }
    temps->push_back(temp);
    hit.renames.push_back({temp, final_path});
    // The output this hit replaces gets a second name, removed with the
    // temporaries once the client answered: the client's removal of the old
    // output then frees no blocks (ext4 truncating an object took a third of
    // the client's CPU); the server does that after the client is gone.
    struct stat old {};
    if (::lstat(final_path.c_str(), &old) == 0 && S_ISREG(old.st_mode) && old.st_nlink == 1) {
      std::string aside = final_path + ".lexpack-server-" + std::to_string(::getpid()) + "-" +
                          std::to_string(++temp_counter_) + "-old";
      if (::link(final_path.c_str(), aside.c_str()) == 0) temps->push_back(aside);
    }
  }
  if (!have_object || (cmd.wants_depfile && !have_depfile)) return missed("outputs incomplete");
  if (dry) {
    Reply info;
    info.kind = ReplyKind::kInfo;
    info.info =
        "would hit: answered from memory (no change reported since its closure was checked)";
    return info;
  }
  hit.out.assign(*out);
  hit.err.assign(*err);
  hit.info = std::to_string(action->compile_time_us);  // for the build's own counts
  ++hits_;
  store_->add_counter("hits", 1);
  store_->add_counter("server_hits", 1);
  store_->add_counter("time_saved_us", int64_t(action->compile_time_us));
  launcher::note_build_use(key);
  log->write("hit (server)");
  return hit;
}

std::string Server::status_text() const {
  size_t trusted = 0;
  for (const Entry& e : entries_) trusted += e.trusted;
  return "pid " + std::to_string(::getpid()) + "\nversion " + version_ + "\nentries " +
         std::to_string(entries_.size()) + "\ntrusted " + std::to_string(trusted) + "\nwatches " +
         std::to_string(watches_.watch_count()) + "\nhits " + std::to_string(hits_) + "\nmisses " +
         std::to_string(misses_) + "\nvalidations " + std::to_string(validations_) +
         "\ntrust_drops " + std::to_string(drops_) + "\nlast_miss " + last_miss_ + "\n";
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
  if (req.version != version_) {
    reply.kind = ReplyKind::kIncompatible;
    reply.info = version_;
    send_frame(fd, encode_reply(reply));
    return false;  // a newer (or older) lexpack is in use: make room for its server
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
    case RequestKind::kExplain:
      reply = compile(req, nullptr);
      send_frame(fd, encode_reply(reply));
      return true;
    case RequestKind::kCompile:
      break;
  }
  std::vector<std::string> temps;
  reply = compile(req, &temps);
  if (send_frame(fd, encode_reply(reply)) && !temps.empty()) {
    // The client renames the outputs, then acknowledges (or gives up): wait
    // for that beside the next requests, not before them.
    *pending =
        PendingHit{fd, std::move(temps),
                   std::chrono::steady_clock::now() + std::chrono::milliseconds(kAckTimeoutMs)};
    return true;
  }
  for (const std::string& t : temps) ::unlink(t.c_str());
  return true;
}

}  // namespace

base::Status run_server(const ServerOptions& options) {
  cache::Config config = cache::load_config(options.cache_dir);
  if (config.dir.empty()) return base::Status::error("no cache directory");
  uint64_t idle = options.idle_seconds ? options.idle_seconds : config.server_idle_s;
  ::mkdir(config.dir.c_str(), 0777);
  std::string dir = server_dir(config.dir);
  if (dir.empty() || !ensure_private_dir(dir)) {
    return base::Status::error("no private directory for the server socket");
  }
  int lock = ::open((dir + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0) return base::Status::error("cannot open the server lock");
  if (::flock(lock, LOCK_EX | LOCK_NB) != 0) {
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
  cache::StoreOptions store_options;
  store_options.dir = config.dir;
  auto store = cache::Store::open(store_options);
  if (!store.ok()) return failed("cache: " + store.message());
  Server server(std::move(store.value()));
  std::string err;
  if (!server.init(&err)) return failed(err);

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
  struct stat bound_st {};
  struct stat cache_st {};
  ::stat(path.c_str(), &bound_st);
  ::stat(config.dir.c_str(), &cache_st);
  // A server whose cache directory was removed (a test's, a CI job's) or
  // whose socket another server took over has no one left to serve.
  auto orphaned = [&] {
    struct stat now {};
    if (::stat(path.c_str(), &now) != 0 || now.st_ino != bound_st.st_ino) return true;
    return ::stat(config.dir.c_str(), &now) != 0 || now.st_ino != cache_st.st_ino ||
           now.st_dev != cache_st.st_dev;
  };
  constexpr int kOrphanCheckMs = 5000;
  std::vector<PendingHit> pending;
  // Finishes the pending hits whose client answered or hung up, and those
  // past their deadline (all of them when `all`, waiting for each first).
  auto settle = [&pending](const std::vector<pollfd>& polled, bool all) {
    const auto now = std::chrono::steady_clock::now();
    std::vector<PendingHit> kept;
    for (size_t i = 0; i < pending.size(); ++i) {
      PendingHit& h = pending[i];
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
        finish_pending(h);
      } else {
        kept.push_back(std::move(h));
      }
    }
    pending = std::move(kept);
  };
  auto idle_since = std::chrono::steady_clock::now();
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
    int ready = ::poll(polled.data(), polled.size(), timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    settle(polled, false);
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
  settle({}, true);
  // Leave the socket only if it is still ours.
  struct stat now {};
  if (::stat(path.c_str(), &now) == 0 && now.st_ino == bound_st.st_ino) ::unlink(path.c_str());
  ::close(listener);
  ::close(lock);
  return base::Status();
}

}  // namespace lexpack::server
