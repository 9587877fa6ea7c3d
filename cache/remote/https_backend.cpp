// https through lexpack-https (see https_helper/main.cpp): started on the
// first request over a socket pair (a dead helper is an error, never a
// SIGPIPE), kept for this backend's life, and killed when a reply does not
// come within the operation timeout. Paths are those of the http backend.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "cache/remote/backend.h"
#include "cache/remote/http_common.h"
#include "cache/remote/remote_entry.h"

extern char** environ;

namespace lexpack::cache::remote {

namespace {

using Clock = std::chrono::steady_clock;

// libcurl's connect timeout covers the TLS handshake as well, which takes
// longer than a TCP connect (the connect-timeout attribute's 100 ms default
// is sized for that): the handshake gets this much more.
constexpr int kHandshakeMs = 2000;

// lexpack-https beside the running program, or LEXPACK_HTTPS_HELPER.
std::string helper_path() {
  if (const char* env = std::getenv("LEXPACK_HTTPS_HELPER"); env && *env) return env;
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  std::string self(buf, size_t(n));
  return self.substr(0, self.rfind('/') + 1) + "lexpack-https";
}

class HttpsBackend final : public PerKeyBackend {
 public:
  explicit HttpsBackend(const RemoteSpec& spec) : spec_(spec) {
    std::string port = spec.port == 443 ? "" : ":" + std::to_string(spec.port);
    origin_ = "https://" + spec.host + port;
  }
  ~HttpsBackend() override { stop(); }

 private:
  Reply start() {
    std::string path = helper_path();
    if (path.empty() || ::access(path.c_str(), X_OK) != 0) {
      return {Outcome::kError, {}, "https needs lexpack-https beside lexpack (not found)"};
    }
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      return {Outcome::kError, {}, std::string("socketpair: ") + std::strerror(errno)};
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, sv[1], 0);
    posix_spawn_file_actions_adddup2(&actions, sv[1], 1);
    std::vector<std::string> args = {
        path,
        "--connect-timeout-ms",
        std::to_string(spec_.connect_timeout_ms + kHandshakeMs),
        "--timeout-ms",
        std::to_string(spec_.operation_timeout_ms),
        "--max-bytes",
        std::to_string(kMaxEntrySize + kEntryHeaderSize + kEntrySignatureSize),
        "--first-byte-ms",
        std::to_string(spec_.first_byte_timeout_ms),
        "--min-rate",
        std::to_string(spec_.min_rate)};
    if (!spec_.ca_file.empty()) {
      args.push_back("--ca-file");
      args.push_back(spec_.ca_file);
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // The environment, with the credentials added (never on the command line).
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) {
      if (std::strncmp(*e, "LEXPACK_HTTPS_USERPWD=", 22) != 0) env_strings.emplace_back(*e);
    }
    if (!spec_.user.empty() || !spec_.password.empty()) {
      env_strings.push_back("LEXPACK_HTTPS_USERPWD=" + spec_.user + ":" + spec_.password);
    }
    std::vector<char*> envp;
    for (std::string& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    int rc = ::posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(sv[1]);
    if (rc != 0) {
      ::close(sv[0]);
      return {Outcome::kError, {}, std::string("starting lexpack-https: ") + std::strerror(rc)};
    }
    pid_ = pid;
    fd_ = sv[0];
    return {Outcome::kStored, {}, {}};
  }

  void stop() {
    if (fd_ >= 0) ::close(fd_);  // the helper sees its input end and leaves
    fd_ = -1;
    if (pid_ > 0) {
      int status;
      if (::waitpid(pid_, &status, WNOHANG) == 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
      }
    }
    pid_ = -1;
  }

  Reply fail(Outcome outcome, std::string what) {
    stop();  // a helper in an unknown state is not reused
    return {outcome, {}, std::move(what)};
  }

  bool send_all(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes.remove_prefix(size_t(n));
    }
    return true;
  }

  // Reads until *buf holds `want` bytes (or, with want == 0, a newline).
  bool fill(std::string* buf, size_t want, Clock::time_point deadline, bool* timed_out) {
    char chunk[1 << 16];
    while (want ? buf->size() < want : buf->find('\n') == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        *timed_out = true;
        return false;
      }
      pollfd p{fd_, POLLIN, 0};
      int r = ::poll(&p, 1, int(left.count()));
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) continue;
      ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buf->append(chunk, size_t(n));
    }
    return true;
  }

  Reply request(const char* method, std::string_view key, const std::string_view* body) override {
    if (fd_ < 0) {
      Reply started = start();
      if (started.failed()) return started;
    }
    std::string m(method);
    std::string head = m + " " + origin_ + entry_path(spec_, key);
    if (body) head += " " + std::to_string(body->size());
    head += "\n";
    if (!send_all(head) || (body && !send_all(*body))) {
      return fail(Outcome::kError, "lexpack-https is gone");
    }
    // The helper's own timeouts come first; this one catches a stuck helper.
    Clock::time_point deadline =
        Clock::now() + std::chrono::milliseconds(spec_.connect_timeout_ms + kHandshakeMs +
                                                 spec_.operation_timeout_ms + 1000);
    std::string buf;
    bool timed_out = false;
    if (!fill(&buf, 0, deadline, &timed_out)) {
      return fail(timed_out ? Outcome::kTimeout : Outcome::kError, "no reply from lexpack-https");
    }
    size_t nl = buf.find('\n');
    long status = 0;
    unsigned long long length = 0;
    if (std::sscanf(buf.c_str(), "%ld %llu", &status, &length) != 2 ||
        length > kMaxEntrySize + kEntryHeaderSize + kEntrySignatureSize) {
      return fail(Outcome::kError, "malformed reply from lexpack-https");
    }
    if (!fill(&buf, nl + 1 + length, deadline, &timed_out)) {
      return fail(timed_out ? Outcome::kTimeout : Outcome::kError,
                  "short reply from lexpack-https");
    }
    std::string content = buf.substr(nl + 1, length);
    if (status == -2) return {Outcome::kTimeout, {}, content};
    if (status < 0) return {Outcome::kError, {}, content};
    return reply_for_status(m, status, std::move(content));
  }

  RemoteSpec spec_;
  std::string origin_;
  int fd_ = -1;
  pid_t pid_ = -1;
};

}  // namespace

std::unique_ptr<Backend> make_https_backend(const RemoteSpec& spec) {
  return std::make_unique<HttpsBackend>(spec);
}

}  // namespace lexpack::cache::remote
