// HTTP/1.1 over plain sockets: GET/PUT/HEAD of one file per entry, either
// <path>/<k[0:2]>/<k[2:]> (layout=subdirs: any WebDAV or nginx PUT server)
// or <path>/ac/<64 hex> (layout=bazel: bazel-remote's action cache, which
// must accept non-protobuf entries). One kept-alive connection per backend;
// every wait is bounded by the spec's timeouts. https goes through
// https_backend.cpp, with the same paths.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>

#include "cache/remote/backend.h"
#include "cache/remote/http_common.h"
#include "cache/remote/remote_entry.h"
#include "cache/remote/transfer_pace.h"

namespace lexpack::cache::remote {
namespace {

using Clock = Pace::Clock;

// Rounded up for the pace, so that a poll that times out finds it passed.
int ms_until(Clock::time_point deadline, const Pace& pace) {
  int pace_ms = poll_ms_until(pace.give_up());
  if (pace_ms < std::numeric_limits<int>::max()) ++pace_ms;
  return std::min(poll_ms_until(deadline), pace_ms);
}

std::string base64(std::string_view in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += t[(v >> s) & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out += t[(v >> 18) & 63];
    out += t[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += t[(v >> 18) & 63];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

class HttpBackend final : public PerKeyBackend {
 public:
  explicit HttpBackend(const RemoteSpec& spec) : spec_(spec) {
    if (!spec.user.empty() || !spec.password.empty()) {
      auth_ = "Authorization: Basic " + base64(spec.user + ":" + spec.password) + "\r\n";
    }
  }
  ~HttpBackend() override { disconnect(); }

 private:
  std::string target(std::string_view key) const { return entry_path(spec_, key); }

  void disconnect() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  Reply fail(Outcome o, std::string what) {
    disconnect();
    return {o, {}, std::move(what)};
  }

  // Connects within the connect timeout; an empty string on success.
  Reply connect_now() {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    std::string port = std::to_string(spec_.port);
    if (int rc = ::getaddrinfo(spec_.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
      return fail(Outcome::kError, std::string("resolve: ") + gai_strerror(rc));
    }
    Reply result = {Outcome::kError, {}, "connect: no address"};
    for (addrinfo* a = found; a; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) continue;
      int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
      if (rc != 0 && errno == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        int n = ::poll(&p, 1, spec_.connect_timeout_ms);
        int err = 0;
        socklen_t len = sizeof err;
        if (n == 0) {
          ::close(fd);
          result = {Outcome::kTimeout, {}, "connect: timed out"};
          continue;
        }
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        rc = (n > 0 && err == 0) ? 0 : -1;
        errno = err;
      }
      if (rc == 0) {
        // A request is written as head then body: without this, Nagle's
        // algorithm holds the body until the server's delayed ACK (~40 ms).
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fd_ = fd;
        ::freeaddrinfo(found);
        return {Outcome::kStored, {}, {}};
      }
      result = {Outcome::kError, {}, std::string("connect: ") + std::strerror(errno)};
      ::close(fd);
    }
    ::freeaddrinfo(found);
    return result;
  }

  bool send_all(std::string_view bytes, Clock::time_point deadline, Pace* pace, Reply* error) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      if (pace->too_slow()) {
        *error = fail(Outcome::kTimeout, "send: " + pace->why());
        return false;
      }
      pollfd p{fd_, POLLOUT, 0};
      int n = ::poll(&p, 1, ms_until(deadline, *pace));
      if (n == 0) {
        *error =
            fail(Outcome::kTimeout, pace->too_slow() ? "send: " + pace->why() : "send: timed out");
        return false;
      }
      ssize_t w = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (w < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (w <= 0) {
        *error = fail(Outcome::kError, std::string("send: ") + std::strerror(errno));
        return false;
      }
      sent += size_t(w);
      pace->add(size_t(w));
    }
    return true;
  }

  // Reads until `buf` holds at least `want` bytes (or the header end when
  // want is 0). False with *error set on timeout, close or failure.
  bool fill(std::string* buf, size_t want, Clock::time_point deadline, Pace* pace, Reply* error) {
    char chunk[65536];
    while (want ? buf->size() < want : buf->find("\r\n\r\n") == std::string::npos) {
      if (!want && buf->size() > 65536) {
        *error = fail(Outcome::kError, "reply header too large");
        return false;
      }
      if (pace->too_slow()) {
        *error = fail(Outcome::kTimeout, "reply: " + pace->why());
        return false;
      }
      pollfd p{fd_, POLLIN, 0};
      int n = ::poll(&p, 1, ms_until(deadline, *pace));
      if (n == 0) {
        *error = fail(Outcome::kTimeout,
                      pace->too_slow() ? "reply: " + pace->why() : "reply: timed out");
        return false;
      }
      ssize_t r = ::recv(fd_, chunk, sizeof chunk, 0);
      if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (r <= 0) {
        *error = fail(Outcome::kError, r == 0 ? "connection closed" : "recv failed");
        return false;
      }
      buf->append(chunk, size_t(r));
      pace->add(size_t(r));
    }
    return true;
  }

  Reply request(const char* method, std::string_view key, const std::string_view* body) override {
    // A kept-alive connection the server closed meanwhile is retried once.
    for (int attempt = 0; attempt < 2; ++attempt) {
      bool fresh = fd_ < 0;
      Reply r = attempt_request(method, key, body);
      if (r.failed() && !fresh && r.outcome == Outcome::kError) continue;
      return r;
    }
    return fail(Outcome::kError, "connection lost");
  }

  std::string head_of(std::string_view method, std::string_view key) const {
    std::string head(method);
    head += " " + target(key) + " HTTP/1.1\r\nHost: " + spec_.host + "\r\n" + auth_;
    return head;
  }
  Clock::time_point deadline_now() const {
    return Clock::now() + std::chrono::milliseconds(spec_.operation_timeout_ms);
  }

  Reply attempt_request(const char* method, std::string_view key, const std::string_view* body) {
    if (fd_ < 0) {
      Reply c = connect_now();
      if (c.failed()) return c;
    }
    Clock::time_point deadline = deadline_now();
    std::string head = head_of(method, key);
    if (body) head += "Content-Length: " + std::to_string(body->size()) + "\r\n";
    head += "\r\n";
    Reply error;
    Pace sending(spec_.first_byte_timeout_ms, spec_.min_rate, true);
    if (!send_all(head, deadline, &sending, &error)) return error;
    if (body && !send_all(*body, deadline, &sending, &error)) return error;
    std::string buf;
    Reply reply;
    bool closing = false;
    if (!read_reply(method, &buf, deadline, &reply, &closing)) return reply;
    if (closing || !buf.empty()) disconnect();
    return reply;
  }

  // Reads the reply at the front of `buf` (reading more as needed) into
  // *out and takes it off `buf`; *closing when the server ends the
  // connection after it. False with *out the error (disconnected).
  bool read_reply(std::string_view method, std::string* buf, Clock::time_point deadline, Reply* out,
                  bool* closing) {
    Pace receiving(spec_.first_byte_timeout_ms, spec_.min_rate, false);
    if (!fill(buf, 0, deadline, &receiving, out)) return false;
    size_t header_end = buf->find("\r\n\r\n") + 4;
    std::string header = buf->substr(0, header_end);
    for (char& c : header) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (header.rfind("http/1.", 0) != 0 || header.size() < 12) {
      *out = fail(Outcome::kError, "not an HTTP reply");
      return false;
    }
    const int status = std::atoi(header.c_str() + 9);
    if (header.find("transfer-encoding:") != std::string::npos) {
      *out = fail(Outcome::kError, "chunked replies are not supported");
      return false;
    }
    uint64_t length = 0;
    size_t cl = header.find("\r\ncontent-length:");
    if (cl != std::string::npos) length = std::strtoull(header.c_str() + cl + 17, nullptr, 10);
    // HEAD replies, 1xx, 204 and 304 have no body (RFC 9112 6.3): nginx
    // answers a PUT over an existing entry with a bare 204.
    const bool no_body = method == "HEAD" || status / 100 == 1 || status == 204 || status == 304;
    if (no_body) length = 0;
    if (cl == std::string::npos && !no_body) {
      *out = fail(Outcome::kError, "reply without Content-Length");
      return false;
    }
    if (length > kMaxEntrySize + kEntryHeaderSize + kEntrySignatureSize) {
      *out = fail(Outcome::kError, "oversized reply");
      return false;
    }
    if (!fill(buf, header_end + length, deadline, &receiving, out)) return false;
    *out = reply_for_status(method, status, buf->substr(header_end, length));
    buf->erase(0, header_end + length);
    *closing = header.find("connection: close") != std::string::npos;
    return true;
  }

 public:
  // HTTP/1.1 pipelining: every GET written at once on the kept-alive
  // connection, then the replies read in order, so that a batch costs one
  // round trip instead of one per key. The rest are asked on a new
  // connection when the server closed it after some replies (saying so or
  // not); a kept-alive connection that fails before any reply (the server
  // closed it while idle) is tried once more, anew; a timeout or any other
  // failure answers every key left.
  std::vector<Reply> get_many(std::span<const std::string> keys) override {
    std::vector<Reply> out;
    out.reserve(keys.size());
    bool retried = false;
    while (out.size() < keys.size()) {
      const bool fresh = fd_ < 0;
      const size_t before = out.size();
      Reply failed = pipeline(keys.subspan(before), &out);
      if (!failed.failed()) continue;
      const bool progress = out.size() > before;
      if (failed.outcome == Outcome::kError && (progress || (!fresh && !retried))) {
        retried = retried || !progress;
        continue;
      }
      while (out.size() < keys.size()) out.push_back(failed);
    }
    return out;
  }

 private:
  // Sends a GET of each of `keys` and appends the replies read: all of
  // them, or those before the server closed the connection (a reply that
  // is not a failure), or none past a failure (returned).
  Reply pipeline(std::span<const std::string> keys, std::vector<Reply>* out) {
    if (fd_ < 0) {
      Reply c = connect_now();
      if (c.failed()) return c;
    }
    std::string heads;
    for (const std::string& key : keys) heads += head_of("GET", key) + "\r\n";
    Reply error;
    Pace sending(spec_.first_byte_timeout_ms, spec_.min_rate, true);
    if (!send_all(heads, deadline_now(), &sending, &error)) return error;
    std::string buf;
    for (size_t i = 0; i < keys.size(); ++i) {
      Reply reply;
      bool closing = false;
      if (!read_reply("GET", &buf, deadline_now(), &reply, &closing)) return reply;
      out->push_back(std::move(reply));
      if (closing) {
        disconnect();
        return {Outcome::kStored, {}, {}};
      }
    }
    if (!buf.empty()) disconnect();  // out of step with the server
    return {Outcome::kStored, {}, {}};
  }

  RemoteSpec spec_;
  std::string auth_;
  int fd_ = -1;
};

}  // namespace

std::string entry_path(const RemoteSpec& spec, std::string_view key) {
  std::string k(key);
  if (spec.layout == Layout::kBazel) {
    while (k.size() < 64) k += '0';
    return spec.path + "/ac/" + k;
  }
  return spec.path + "/" + k.substr(0, 2) + "/" + k.substr(2);
}

Reply reply_for_status(std::string_view method, long status, std::string content) {
  if (method == "PUT") {
    if (status >= 200 && status < 300) return {Outcome::kStored, {}, {}};
  } else if (status == 200) {
    return {Outcome::kHit, method == "GET" ? std::move(content) : std::string(), {}};
  } else if (status == 404) {
    return {Outcome::kMiss, {}, {}};
  }
  return {Outcome::kError, {}, std::string(method) + ": HTTP " + std::to_string(status)};
}

std::vector<Reply> get_each(Backend& backend, std::span<const std::string> keys) {
  std::vector<Reply> out;
  for (const std::string& k : keys) {
    out.push_back(backend.get(k));
    if (out.back().failed()) {
      while (out.size() < keys.size()) out.push_back(out.back());
      break;
    }
  }
  return out;
}

std::unique_ptr<Backend> make_https_backend(const RemoteSpec& spec);  // https_backend.cpp

std::unique_ptr<Backend> make_http_backend(const RemoteSpec& spec) {
  if (spec.scheme == Scheme::kHttps) return make_https_backend(spec);
  return std::make_unique<HttpBackend>(spec);
}

}  // namespace lexpack::cache::remote
