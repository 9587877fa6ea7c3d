// Real servers for the remote-tier tests: redis-server and nginx (with its
// WebDAV PUT), each started on a free local port with its files in a temp
// dir, waited for until it accepts connections, and stopped by pid. Also a
// listener that accepts connections and never answers.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_dir.h"

namespace lexpack::testing {

// A local TCP port nothing listens on right now.
int free_port();
// True once something accepts connections on 127.0.0.1:port (within ms).
bool wait_for_port(int port, int ms);

class ServerProcess {
 public:
  ServerProcess() = default;
  ~ServerProcess() { stop(); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  int port() const { return port_; }
  bool running() const { return pid_ > 0; }
  void stop();  // SIGTERM, then SIGKILL; waits

 protected:
  // Starts argv and waits until the port answers; false (and stopped) if not.
  bool start(const std::vector<std::string>& argv, int port);
  pid_t pid_ = -1;
  int port_ = 0;
};

class RedisServer : public ServerProcess {
 public:
  // Extra arguments, e.g. {"--maxmemory", "1mb"}.
  bool start(const std::vector<std::string>& extra = {});
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

 private:
  TestDir dir_;
};

class NginxServer : public ServerProcess {
 public:
  // tls: https with a certificate made here for 127.0.0.1 (openssl), which
  // clients trust through ca_file(). `http_lines`: more directives of the
  // http block ("keepalive_requests 3;").
  bool start(bool tls = false, const std::string& http_lines = "");
  std::string url() const {
    return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) +
           "/cache";
  }
  std::string ca_file() const { return dir_.at("cert.pem"); }
  std::string data_dir() const { return dir_.at("data"); }

 private:
  TestDir dir_;
  bool tls_ = false;
};

// distccd on localhost (as root its jobs run as nobody); its log says which
// compiles it ran.
class DistccServer : public ServerProcess {
 public:
  bool start();
  std::string hosts() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return dir_.read("distccd.log"); }
  std::string state_dir() const { return dir_.at("client"); }

 private:
  TestDir dir_;
};

// Accepts connections and never reads or answers (a hung server).
class BlackHole {
 public:
  BlackHole();
  ~BlackHole();
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A listener that answers every request on its connections with the same
// bytes, whatever was asked: a server that lies (an oversized length, a
// malformed reply) to check that the client refuses it. With `byte_gap_ms`,
// a sick one: the reply goes out one byte at a time, that long apart.
class FixedReplyServer {
 public:
  explicit FixedReplyServer(std::string reply, int byte_gap_ms = 0);
  ~FixedReplyServer();
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::shared_ptr<std::atomic<bool>> stop_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace lexpack::testing
