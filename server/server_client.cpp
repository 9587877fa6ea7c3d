// The thin client: one connection, one request with argv, working directory
// and environment, one reply. Outputs of a hit were written by the server
// under temporary names and are renamed into place here, so nothing appears
// unless this process accepted the answer.
#include "server/server_client.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "base/file_util.h"
#include "cache/config/config.h"
#include "compiler/compile_command.h"
#include "launcher/decision_log.h"
#include "ninja_integration/build_counts.h"
#include "server/stopped_server.h"

extern char** environ;

namespace lexpack::server {
namespace {

int connect_to(const std::string& path, int wait_s = 2) {
  struct sockaddr_un addr {};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return -1;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  // A server that does not answer within this long is treated as absent.
  struct timeval tv {};
  tv.tv_sec = wait_s;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The cache directory as its server names it (run_server): absolute, with
// no trailing '/', so that both ends find the same socket directory (a long
// one is named after a hash of this string).
std::string server_cache_dir() {
  std::string dir = cache::default_cache_dir();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!dir.empty() && dir[0] != '/') {
    std::string cwd = base::working_dir();
    dir = cwd.empty() ? std::string() : base::absolute_path(dir, cwd);
  }
  return dir;
}

// The server's private directory, when it is this user's alone; empty: none.
std::string server_private_dir() {
  std::string dir = server_dir(server_cache_dir());
  if (dir.empty()) return {};
  // Only a socket in a directory no one else can enter is ours.
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & 077) != 0) {
    return {};
  }
  return dir;
}

// How a request waits for its reply. A compile's hit: up to kReplyWaitMs;
// a server that lets it wait that long without working is marked, and no
// one asks it while the mark holds. A closure to evaluate: longer (the
// alternative is evaluating it here), marking nothing. A control request
// (`lexpack server --status`): sent whatever the mark says, marking nothing.
enum class Waiting { kCompile, kEvaluation, kControl };
constexpr int kReplyWaitMs = 2000;
constexpr int kEvaluationWaitMs = 10000;
constexpr int kControlWaitMs = 5000;

// The request sent and its reply read; nullopt on any failure. A server
// whose process is stopped is not waited for (*stopped: its pid, as for a
// marked one).
std::optional<Reply> ask(const Request& req, int* fd_out, pid_t* stopped = nullptr,
                         Waiting waiting = Waiting::kCompile) {
  std::string dir = server_private_dir();
  if (dir.empty()) return std::nullopt;
  pid_t stopped_pid = waiting == Waiting::kControl ? 0 : marked_unavailable(dir);
  int fd = stopped_pid ? -1 : connect_to(socket_path(dir));
  if (fd < 0) {
    if (stopped) *stopped = stopped_pid;
    return std::nullopt;
  }
  const int wait_ms = waiting == Waiting::kCompile      ? kReplyWaitMs
                      : waiting == Waiting::kEvaluation ? kEvaluationWaitMs
                                                        : kControlWaitMs;
  std::string bytes;
  Reply reply;
  if (!send_frame(fd, encode_request(req)) ||
      wait_for_reply(fd, wait_ms, dir, &stopped_pid, waiting == Waiting::kCompile) !=
          ReplyWait::kReady ||
      !recv_frame(fd, &bytes) || !decode_reply(bytes, &reply)) {
    ::close(fd);
    if (stopped) *stopped = stopped_pid;
    return std::nullopt;
  }
  if (fd_out) {
    *fd_out = fd;
  } else {
    ::close(fd);
  }
  return reply;
}

// Why the server's mark says it is not asked ("is stopped; ...").
std::string marked_reason() {
  Unavailable why = Unavailable::kStopped;
  marked_unavailable(server_private_dir(), &why);
  return unavailable_text(why);
}

}  // namespace

bool server_enabled() {
  const char* off = std::getenv("LEXPACK_SERVER");
  const char* disable = std::getenv("LEXPACK_DISABLE");
  // LEXPACK_DISABLE means lexpack touches nothing: no server either.
  return !(off && std::string_view(off) == "0") &&
         !(disable && *disable && std::string_view(disable) != "0");
}

bool take_declined_mark(bool* busy) {
  const char* v = std::getenv("LEXPACK_SERVER_DECLINED");
  std::string_view said = v ? v : "";
  bool declined = !said.empty() && said != "0";
  // "busy": it was working all the while the client waited. "replace": it
  // is of another binary and leaves; this binary's server is started in its
  // place, and the leaving one is asked nothing more.
  if (busy) *busy = said == "busy" || said == "replace" || said.starts_with("unanswered:");
  if (said == "replace") start_server(true);
  // "unanswered:<pid>": lexpack-client waited the whole bound for that
  // server; marked, it is not asked by the compiles that follow.
  if (said.starts_with("unanswered:")) {
    std::string dir = server_private_dir();
    long pid = std::strtol(v + sizeof "unanswered:" - 1, nullptr, 10);
    if (!dir.empty() && pid > 0) mark_unanswered(dir, pid_t(pid));
  }
  ::unsetenv("LEXPACK_SERVER_DECLINED");
  return declined;
}

namespace {

// The process's umask. With `threads`, read without setting it (`lexpack
// ninja` asks from a thread while its other threads create files) from
// /proc/self/status where it can; else by setting and restoring it.
mode_t current_umask(bool threads) {
  int fd = threads ? ::open("/proc/self/status", O_RDONLY | O_CLOEXEC) : -1;
  if (fd >= 0) {
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n > 0) {
      buf[n] = '\0';
      if (const char* line = std::strstr(buf, "\nUmask:")) {
        char* end = nullptr;
        unsigned long mask = std::strtoul(line + 7, &end, 8);
        if (end != line + 7 && mask <= 0777) return mode_t(mask);
      }
    }
  }
  mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

// A compile's request, as the compile itself would send it.
std::optional<Request> compile_request(RequestKind kind, const std::vector<std::string>& argv,
                                       bool threads = false) {
  Request req;
  req.kind = kind;
  req.version = protocol_version();
  req.argv = argv;
  req.cwd = base::working_dir();  // as the compiler names it (-g records it)
  if (req.cwd.empty()) return std::nullopt;
  for (char** e = environ; e && *e; ++e) req.env.emplace_back(*e);
  req.umask = current_umask(threads);
  return req;
}

// One request about many compiles (kPrepare, kScanAnswers), waiting up to
// about `wait_ms` for the reply; with `starting`, up to a second more for a
// server started a moment ago to listen.
std::optional<Reply> ask_about(RequestKind kind, std::vector<Request::Compile> compiles,
                               int wait_ms, bool starting) {
  std::string dir = server_private_dir();
  if (dir.empty() || compiles.empty() || marked_unavailable(dir)) return std::nullopt;
  std::string path = socket_path(dir);
  int fd = -1;
  for (int tries = 0; (fd = connect_to(path, 1 + wait_ms / 1000)) < 0; ++tries) {
    if (!starting || tries >= 50) return std::nullopt;  // none listening
    ::usleep(20 * 1000);
  }
  // Made once a server listens: with none (a plain scan), reading the
  // process's umask and environment would be wasted.
  std::optional<Request> req = compile_request(kind, {}, true);
  if (!req) {
    ::close(fd);
    return std::nullopt;
  }
  req->compiles = std::move(compiles);
  std::string bytes;
  Reply reply;
  pid_t stopped = 0;
  bool ok = send_frame(fd, encode_request(*req)) &&
            wait_for_reply(fd, wait_ms + 1000, dir, &stopped) == ReplyWait::kReady &&
            recv_frame(fd, &bytes) && decode_reply(bytes, &reply) && reply.kind == ReplyKind::kInfo;
  ::close(fd);
  if (!ok) return std::nullopt;
  return reply;
}

}  // namespace

std::optional<Prepared> prepare_compiles(std::vector<Request::Compile> compiles, int wait_ms) {
  const size_t asked = compiles.size();
  std::optional<Reply> reply = ask_about(RequestKind::kPrepare, std::move(compiles), wait_ms, true);
  if (!reply) return std::nullopt;
  Prepared p;
  p.said = std::move(reply->info);
  p.answered.resize(asked);
  for (size_t i = 0; i < asked && i < reply->answers.size(); ++i) {
    p.answered[i] = reply->answers[i] == kTrustedAnswer;
  }
  return p;
}

std::optional<scan::KnownScans> scan_answers(std::vector<Request::Compile> compiles, int wait_ms) {
  const size_t asked = compiles.size();
  std::optional<Reply> reply =
      ask_about(RequestKind::kScanAnswers, std::move(compiles), wait_ms, false);
  if (!reply || reply->answers.size() != asked) return std::nullopt;
  return scan::KnownScans{std::move(reply->answers), std::move(reply->paths)};
}

std::optional<std::string> explain_with_server(const std::vector<std::string>& argv) {
  std::optional<Request> req = compile_request(RequestKind::kExplain, argv);
  if (!req) return std::nullopt;
  pid_t stopped = 0;
  std::optional<Reply> reply = ask(*req, nullptr, &stopped);
  if (stopped) {
    return "would decline: its process " + std::to_string(stopped) + " " + marked_reason();
  }
  if (!reply || reply->kind != ReplyKind::kInfo) return std::nullopt;
  return reply->info;
}

void tell_server_done(const std::vector<std::string>& argv) {
  std::optional<Request> req = compile_request(RequestKind::kLearn, argv);
  std::string dir = server_private_dir();
  if (!req || dir.empty() || marked_unavailable(dir)) return;
  int fd = connect_to(socket_path(dir));
  if (fd < 0) return;
  send_frame(fd, encode_request(*req));
  ::close(fd);
}

std::optional<launcher::LaunchResult> try_server(const std::vector<std::string>& argv, bool start,
                                                 bool* declined) {
  *declined = false;
  std::optional<Request> made = compile_request(RequestKind::kCompile, argv);
  if (!made) return std::nullopt;
  const Request& req = *made;
  int fd = -1;
  pid_t stopped = 0;
  std::optional<Reply> reply = ask(req, &fd, &stopped);
  if (!reply && stopped) {
    // The in-process path is as correct, and as fast as without a server.
    launcher::DecisionLog log;
    log.set_subject(compiler::parse_compile_command(argv).source);
    log.write("server declined: its process " + std::to_string(stopped) + " " + marked_reason());
    return std::nullopt;
  }
  if (!reply) {
    // One starting (by this compile or another) evaluates this closure once
    // it listens, as one that declined would.
    if (start && start_server()) *declined = true;
    return std::nullopt;
  }
  if (reply->kind != ReplyKind::kHit) {
    *declined = reply->kind == ReplyKind::kMiss;
    ::close(fd);
    if (reply->kind == ReplyKind::kIncompatible && start) start_server(true);
    return std::nullopt;
  }
  for (const Reply::Rename& m : reply->renames) {
    if (::rename(m.from.c_str(), m.to.c_str()) != 0) {
      // The normal path writes every output again; the server removes the rest.
      ::close(fd);
      return std::nullopt;
    }
  }
  send_frame(fd, "ok");
  ::close(fd);
  // The server counted the hit in the cache; this build's summary (under
  // `lexpack ninja`) is counted here, by the process the build started.
  ninja_integration::note_build_count("hits", 1);
  ninja_integration::note_build_count("time_saved_us",
                                      std::strtoll(reply->info.c_str(), nullptr, 10));
  launcher::LaunchResult r;
  r.exit_code = reply->exit_code;
  r.out = std::move(reply->out);
  r.err = std::move(reply->err);
  return r;
}

std::optional<Reply> control(RequestKind kind) {
  Request req;
  req.kind = kind;
  req.version = protocol_version();
  req.cwd = "/";
  return ask(req, nullptr, nullptr, Waiting::kControl);
}

std::string evaluate_with_server(const std::vector<std::string>& argv, launcher::ElsewhereAsk how) {
  using launcher::ElsewhereAsk;
  std::optional<Request> req =
      compile_request(how == ElsewhereAsk::kCheckedBefore  ? RequestKind::kClosure
                      : how == ElsewhereAsk::kCheckedAfter ? RequestKind::kClosureCheckedAfter
                                                           : RequestKind::kClosureAgain,
                      argv);
  std::string dir = server_private_dir();
  if (!req || dir.empty()) return "no request or no server directory";
  // A server started a moment ago listens within a few tens of milliseconds;
  // the evaluation here would take longer than waiting for it.
  for (int tries = 0; tries < 25 && ::access(socket_path(dir).c_str(), F_OK) != 0; ++tries) {
    ::usleep(20 * 1000);
  }
  std::optional<Reply> reply = ask(*req, nullptr, nullptr, Waiting::kEvaluation);
  if (!reply) return "no answer";
  if (reply->kind != ReplyKind::kInfo) return "an answer of another kind";
  return reply->info == kEvaluatedAnswer ? std::string() : reply->info;
}

std::string unavailable_mark() {
  std::string dir = server_private_dir();
  Unavailable why = Unavailable::kStopped;
  pid_t pid = dir.empty() ? 0 : marked_unavailable(dir, &why);
  if (!pid) return {};
  return "marked: its process " + std::to_string(pid) + " " + unavailable_text(why);
}

bool start_server(bool replacing, bool* started) {
  if (started) *started = false;
  // Many compiles of one build find no server at once: only one of them
  // starts it. A server running or starting holds the lock; one that failed
  // to start lately (a read-only cache, no inotify instance left) left a
  // mark, and is not tried again on every compile.
  std::string cache_dir = server_cache_dir();
  std::string dir = server_dir(cache_dir);
  if (dir.empty()) return false;
  if (!ensure_private_dir(dir)) {
    // A cache directory not made yet is made here, as its store would be
    // (its parents too); one that cannot be (read-only) gets no server.
    for (size_t slash = cache_dir.find('/', 1); slash != std::string::npos;
         slash = cache_dir.find('/', slash + 1)) {
      ::mkdir(cache_dir.substr(0, slash).c_str(), 0777);
    }
    ::mkdir(cache_dir.c_str(), 0777);
    if (!ensure_private_dir(dir)) return false;
  }
  struct stat failed {};
  if (::stat(start_failed_path(dir).c_str(), &failed) == 0 &&
      ::time(nullptr) - failed.st_mtime < kStartRetrySeconds) {
    return false;
  }
  int lock = ::open((dir + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0) return false;
  bool held = ::flock(lock, LOCK_EX | LOCK_NB) != 0;
  ::close(lock);
  if (held && !replacing) return true;
  // The server's environment, made before the fork: the cache directory as
  // found here (the server runs from /), and no plugin (a launcher run under
  // `lexpack ninja` has it preloaded; the server outlives that build).
  std::vector<std::string> env_strings{"LEXPACK_DIR=" + cache_dir};
  for (char** e = environ; e && *e; ++e) {
    std::string_view v(*e);
    if (!v.starts_with("LD_PRELOAD=") && !v.starts_with("LEXPACK_DIR="))
      env_strings.emplace_back(v);
  }
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  char self[] = "/proc/self/exe";
  char name[] = "lexpack";
  char sub[] = "server";
  char run[] = "--run";
  char* args[] = {name, sub, run, nullptr};
  pid_t child = ::fork();
  if (child < 0) return false;
  if (child == 0) {
    ::setsid();
    if (::fork() != 0) ::_exit(0);
    int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 1);
      ::dup2(null, 2);
    }
    // Descriptors a build gave this process (ninja's pipes) must not stay
    // open in the server, or the build would wait for it.
    if (::syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
      for (int fd = 3; fd < 65536; ++fd) ::close(fd);
    }
    if (::chdir("/") != 0) ::_exit(1);
    ::execve(self, args, envp.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (started) *started = true;
  return true;
}

}  // namespace lexpack::server
