// Encoding of requests and replies, framing, and the socket's location.
// Everything here is shared by the thin client in the launcher and the
// server loop.
#include "server/protocol.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "base/byte_codec.h"
#include "cache/hash/hash.h"

namespace lexpack::server {
namespace {

constexpr uint64_t kMaxFrame = 1ull << 30;

bool write_full(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

bool read_full(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= size_t(r);
  }
  return true;
}

void put_list(base::VarintWriter& w, const std::vector<std::string>& list) {
  w.u64(list.size());
  for (const std::string& s : list) w.str(s);
}

bool get_list(base::VarintReader& r, std::vector<std::string>* list, size_t limit) {
  uint64_t n = 0;
  if (!r.u64(&n) || n > limit) return false;
  list->resize(n);
  for (std::string& s : *list) {
    if (!r.str(&s)) return false;
  }
  return true;
}

}  // namespace

std::string protocol_version() {
  std::string v = "lexpack-server 1";
  struct stat st {};
  if (::stat("/proc/self/exe", &st) == 0) {
    v += " " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
         std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
  }
  return v;
}

std::string encode_request(const Request& r) {
  base::VarintWriter w;
  w.u8(uint8_t(r.kind));
  w.str(r.version);
  put_list(w, r.argv);
  w.str(r.cwd);
  put_list(w, r.env);
  w.u64(r.umask);
  // Only a kPrepare carries compiles (lexpack-client writes none).
  if (!r.compiles.empty()) {
    w.u64(r.compiles.size());
    for (const Request::Compile& c : r.compiles) {
      w.str(c.cwd);
      put_list(w, c.argv);
    }
  }
  return w.take();
}

bool decode_request(const std::string& bytes, Request* r) {
  base::VarintReader in(bytes);
  uint8_t kind = 0;
  uint64_t mask = 0;
  if (!in.u8(&kind) || kind < 1 || kind > uint8_t(RequestKind::kClosureAgain)) return false;
  r->kind = RequestKind(kind);
  if (!in.str(&r->version) || !get_list(in, &r->argv, bytes.size()) || !in.str(&r->cwd) ||
      !get_list(in, &r->env, bytes.size()) || !in.u64(&mask) || mask > 0777) {
    return false;
  }
  r->umask = uint32_t(mask);
  r->compiles.clear();
  if (in.done()) return true;
  uint64_t n = 0;
  if (!in.u64(&n) || n > bytes.size()) return false;
  r->compiles.resize(n);
  for (Request::Compile& c : r->compiles) {
    if (!in.str(&c.cwd) || !get_list(in, &c.argv, bytes.size())) return false;
  }
  return in.done();
}

std::string encode_reply(const Reply& r) {
  base::VarintWriter w;
  w.u8(uint8_t(r.kind));
  w.i64(r.exit_code);
  w.str(r.out);
  w.str(r.err);
  w.str(r.info);
  w.u64(r.renames.size());
  for (const Reply::Rename& m : r.renames) {
    w.str(m.from);
    w.str(m.to);
  }
  // Only a scan's reply carries answers (lexpack-client reads none).
  if (!r.answers.empty()) {
    put_list(w, r.answers);
    put_list(w, r.paths);
  }
  return w.take();
}

bool decode_reply(const std::string& bytes, Reply* r) {
  base::VarintReader in(bytes);
  uint8_t kind = 0;
  int64_t code = 0;
  uint64_t n = 0;
  if (!in.u8(&kind) || kind < 1 || kind > 4) return false;
  r->kind = ReplyKind(kind);
  if (!in.i64(&code) || !in.str(&r->out) || !in.str(&r->err) || !in.str(&r->info) || !in.u64(&n) ||
      n > bytes.size()) {
    return false;
  }
  r->exit_code = int32_t(code);
  r->renames.resize(n);
  for (Reply::Rename& m : r->renames) {
    if (!in.str(&m.from) || !in.str(&m.to)) return false;
  }
  r->answers.clear();
  r->paths.clear();
  if (in.done()) return true;
  return get_list(in, &r->answers, bytes.size()) && get_list(in, &r->paths, bytes.size()) &&
         in.done();
}

bool send_frame(int fd, const std::string& bytes) {
  if (bytes.size() > kMaxFrame) return false;
  unsigned char head[4];
  for (int i = 0; i < 4; ++i) head[i] = uint8_t(bytes.size() >> (8 * i));
  return write_full(fd, reinterpret_cast<const char*>(head), 4) &&
         write_full(fd, bytes.data(), bytes.size());
}

bool recv_frame(int fd, std::string* bytes) {
  unsigned char head[4];
  if (!read_full(fd, reinterpret_cast<char*>(head), 4)) return false;
  uint64_t n = 0;
  for (int i = 0; i < 4; ++i) n |= uint64_t(head[i]) << (8 * i);
  if (n > kMaxFrame) return false;
  bytes->resize(n);
  return read_full(fd, bytes->data(), n);
}

std::string server_dir(const std::string& cache_dir) {
  if (cache_dir.empty()) return {};
  // sockaddr_un holds 108 bytes; leave room for "/sock" and the NUL.
  constexpr size_t kRoom = 100;
  // One per user: a cache directory several users share (a team's machine,
  // a group-writable cache) has a server of each beside the others'.
  std::string inside = cache_dir + "/server-" + std::to_string(::geteuid());
  if (socket_path(inside).size() < kRoom) return inside;
  std::string name = "lexpack-server-" + cache::hash_bytes(cache_dir).hex().substr(0, 16);
  if (const char* run = std::getenv("XDG_RUNTIME_DIR"); run && *run == '/') {
    std::string dir = std::string(run) + "/" + name;
    if (socket_path(dir).size() < kRoom) return dir;
  }
  std::string dir = "/tmp/lexpack-" + std::to_string(::geteuid()) + "/" + name;
  if (socket_path(dir).size() < kRoom) return dir;
  return {};
}

bool ensure_private_dir(const std::string& dir) {
  auto owned_private = [](const std::string& d) {
    struct stat st {};
    return ::lstat(d.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
           (st.st_mode & 077) == 0;
  };
  if (owned_private(dir)) return true;
  // The parent of a /tmp fallback is per user too, and must be private.
  size_t slash = dir.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    std::string parent = dir.substr(0, slash);
    if (parent == "/tmp/lexpack-" + std::to_string(::geteuid())) {
      ::mkdir(parent.c_str(), 0700);
      if (!owned_private(parent)) return false;
    }
  }
  ::mkdir(dir.c_str(), 0700);
  return owned_private(dir);
}

}  // namespace lexpack::server
