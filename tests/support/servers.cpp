// Server fixtures: fork/exec, poll the port, kill by pid. nginx runs with
// master_process off so the pid we hold is the one serving.
#include "tests/support/servers.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <vector>

namespace lexpack::testing {

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

bool wait_for_port(int port, int ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < deadline) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(uint16_t(port));
    bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    if (ok) return true;
    ::usleep(20'000);
  }
  return false;
}

void ServerProcess::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 200; ++i) {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    ::usleep(10'000);
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

bool ServerProcess::start(const std::vector<std::string>& argv, int port) {
  port_ = port;
  pid_ = ::fork();
  if (pid_ == 0) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, 1);
      ::dup2(null, 2);
    }
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  if (pid_ < 0 || !wait_for_port(port, 10'000)) {
    stop();
    return false;
  }
  return true;
}

bool RedisServer::start(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {"redis-server",
                                   "--port",
                                   std::to_string(free_port()),
                                   "--bind",
                                   "127.0.0.1",
                                   "--save",
                                   "",
                                   "--appendonly",
                                   "no",
                                   "--dir",
                                   dir_.path()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return ServerProcess::start(argv, std::stoi(argv[2]));
}

bool NginxServer::start(bool tls, const std::string& http_lines) {
  int port = free_port();
  std::string d = dir_.path();
  tls_ = tls;
  std::string listen = "127.0.0.1:" + std::to_string(port);
  if (tls) {
    std::string make_cert =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
        "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout '" +
        d + "/key.pem' -out '" + d + "/cert.pem' >/dev/null 2>&1";
    if (std::system(make_cert.c_str()) != 0) return false;
    listen +=
        " ssl;\n    ssl_certificate " + d + "/cert.pem;\n    ssl_certificate_key " + d + "/key.pem";
  }
  dir_.write("data/cache/.keep", "");
  std::string conf =
      "daemon off;\nmaster_process off;\nworker_processes 1;\n"
      "error_log " +
      d + "/error.log;\npid " + d +
      "/nginx.pid;\n"
      "events { worker_connections 64; }\n"
      "http {\n"
      "  access_log off;\n  " +
      http_lines +
      "\n"
      "  client_body_temp_path " +
      d + "/body;\n  proxy_temp_path " + d +
      "/proxy;\n"
      "  fastcgi_temp_path " +
      d + "/fastcgi;\n  uwsgi_temp_path " + d +
      "/uwsgi;\n"
      "  scgi_temp_path " +
      d +
      "/scgi;\n"
      "  server {\n    listen " +
      listen +
      ";\n"
      "    root " +
      d +
      "/data;\n"
      "    location / {\n      dav_methods PUT DELETE;\n      create_full_put_path on;\n"
      "      client_max_body_size 512m;\n    }\n  }\n}\n";
  dir_.write("nginx.conf", conf);
  return ServerProcess::start({"nginx", "-p", d, "-e", d + "/error.log", "-c", d + "/nginx.conf"},
                              port);
}

bool DistccServer::start() {
  int port = free_port();
  dir_.write("client/.keep", "");
  ::chmod(dir_.path().c_str(), 0777);  // the jobs' user writes its log here
  return ServerProcess::start(
      {"distccd", "--daemon", "--no-detach", "--user", "nobody", "--port", std::to_string(port),
       "--listen", "127.0.0.1", "--allow", "127.0.0.1", "--log-file=" + dir_.at("distccd.log"),
       "--log-level=info"},
      port);
}

BlackHole::BlackHole() {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::listen(fd_, 64);  // the kernel completes handshakes; nobody ever reads
  socklen_t len = sizeof addr;
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
}

BlackHole::~BlackHole() {
  if (fd_ >= 0) ::close(fd_);
}

FixedReplyServer::FixedReplyServer(std::string reply, int byte_gap_ms) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::listen(fd_, 16);
  socklen_t len = sizeof addr;
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  const int listener = fd_;
  thread_ = std::thread([listener, reply = std::move(reply), byte_gap_ms, stop = stop_] {
    for (;;) {
      int c = ::accept(listener, nullptr, nullptr);
      if (c < 0) return;  // the listener was shut down
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      if (byte_gap_ms == 0) {
        ssize_t ignored = ::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
        (void)ignored;
      }
      for (size_t i = 0; byte_gap_ms > 0 && i < reply.size() && !stop->load(); ++i) {
        if (::send(c, reply.data() + i, 1, MSG_NOSIGNAL) != 1) break;  // the client gave up
        std::this_thread::sleep_for(std::chrono::milliseconds(byte_gap_ms));
      }
      ::close(c);
    }
  });
}

FixedReplyServer::~FixedReplyServer() {
  stop_->store(true);
  ::shutdown(fd_, SHUT_RDWR);
  if (thread_.joinable()) thread_.join();
  ::close(fd_);
}

}  // namespace lexpack::testing
