// Telling a stopped server from a busy one by its process state rather than
// by a tight timeout: a healthy server on a loaded machine may take long to
// answer, a stopped one never does.
#include "server/stopped_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "base/file_util.h"
#include "base/process.h"

namespace lexpack::server {

bool process_state(pid_t pid, ProcessState* out) {
  if (pid <= 0) return false;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", int(pid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  // "pid (comm) S ppid ...": the name may hold anything, so from its last ')'.
  char* p = std::strrchr(buf, ')');
  if (!p || p[1] != ' ' || p[2] == '\0') return false;
  out->state = p[2];
  // Fields 14-17 (utime, stime, cutime, cstime) are the 11th to 14th after
  // the state (field 3); field 22, the start time, the 19th.
  p += 4;  // past ") S "
  if (p > buf + n) return false;
  out->cpu_ticks = 0;
  for (int field = 4; field <= 22 && p; ++field) {
    if (field >= 14 && field <= 17) out->cpu_ticks += std::strtoull(p, nullptr, 10);
    if (field == 22) break;
    p = std::strchr(p, ' ');
    if (p) ++p;
  }
  out->start_time = p ? std::strtoull(p, nullptr, 10) : 0;
  return true;
}

bool process_working(pid_t pid, const ProcessState& before) {
  ProcessState now;
  if (!process_state(pid, &now) || now.start_time != before.start_time) return false;
  if (now.cpu_ticks != before.cpu_ticks) return true;
  char path[80];
  std::snprintf(path, sizeof path, "/proc/%d/task/%d/children", int(pid), int(pid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char c = 0;
  ssize_t n = ::read(fd, &c, 1);
  ::close(fd);
  return n == 1;
}

const char* unavailable_text(Unavailable why) {
  return why == Unavailable::kStopped ? "is stopped; not asked until it runs again"
                                      : "did not answer in time; not asked for a while";
}

pid_t marked_unavailable(const std::string& dir, Unavailable* why) {
  const std::string path = stopped_mark_path(dir);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;  // the usual case: one failed open
  char buf[128];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  long pid = 0;
  unsigned long long start = 0;
  long long at = 0;
  char reason[16] = "stopped";  // a mark of before reasons were written
  ProcessState now;
  if (n > 0) {
    buf[n] = '\0';
    int fields = std::sscanf(buf, "%ld %llu %lld %15s", &pid, &start, &at, reason);
    const bool unanswered = std::strcmp(reason, "unanswered") == 0;
    const bool same = fields >= 2 && process_state(pid_t(pid), &now) && now.start_time == start;
    const long long age = static_cast<long long>(std::time(nullptr)) - at;
    if (same && (now.stopped() || (unanswered && age >= 0 && age < kUnansweredSeconds))) {
      if (why)
        *why = unanswered && !now.stopped() ? Unavailable::kUnanswered : Unavailable::kStopped;
      return pid_t(pid);
    }
  }
  ::unlink(path.c_str());  // continued, gone, or given another chance
  return 0;
}

void mark_unavailable(const std::string& dir, pid_t pid, const ProcessState& state,
                      Unavailable why) {
  char text[128];
  int n = std::snprintf(text, sizeof text, "%d %" PRIu64 " %lld %s\n", int(pid), state.start_time,
                        static_cast<long long>(std::time(nullptr)),
                        why == Unavailable::kStopped ? "stopped" : "unanswered");
  base::write_file_atomically(stopped_mark_path(dir), std::string_view(text, size_t(n)), 0600);
}

void mark_unanswered(const std::string& dir, pid_t pid) {
  ProcessState st;
  if (pid > 0 && process_state(pid, &st)) {
    mark_unavailable(dir, pid, st, st.stopped() ? Unavailable::kStopped : Unavailable::kUnanswered);
  }
}

pid_t peer_pid(int fd) {
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return 0;
  return cred.pid;
}

ReplyWait wait_for_reply(int fd, int total_ms, const std::string& dir, pid_t* marked_pid,
                         bool mark_if_unanswered) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(total_ms);
  // A hit is answered in about a millisecond: the first look comes soon.
  int slice_ms = 5;
  pid_t pid = -1;
  ProcessState first;  // the server's state when the wait began
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    int wait_ms = int(std::clamp<int64_t>(left.count(), 0, slice_ms));
    struct pollfd p {};
    p.fd = fd;
    p.events = POLLIN;
    int r = ::poll(&p, 1, wait_ms);
    if (r > 0) return ReplyWait::kReady;
    if (r < 0 && errno != EINTR) return ReplyWait::kReady;  // the read says what went wrong
    if (pid < 0 && (pid = peer_pid(fd)) > 0) process_state(pid, &first);
    if (Clock::now() >= deadline) {
      if (mark_if_unanswered && pid > 0 && !process_working(pid, first)) {
        mark_unanswered(dir, pid);
        *marked_pid = pid;
      }
      return ReplyWait::kTimedOut;
    }
    if (ProcessState st; pid > 0 && process_state(pid, &st) && st.stopped()) {
      mark_unavailable(dir, pid, st, Unavailable::kStopped);
      *marked_pid = pid;
      return ReplyWait::kStopped;
    }
    slice_ms = 50;
  }
}

}  // namespace lexpack::server
