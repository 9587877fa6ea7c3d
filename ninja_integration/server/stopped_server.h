// A server whose process is stopped (SIGSTOP, a suspended job, a debugger)
// accepts connections but never answers: waiting for it would cost every
// compile the whole wait. The first client to find it stopped leaves a mark
// beside the socket, and later ones skip the server at the cost of reading
// that mark, until the process runs again or is gone.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace lexpack::server {

// What /proc/<pid>/stat says of a process: its state letter and start time
// (clock ticks after boot, which tells a reused pid). False: no such process.
struct ProcessState {
  char state = '\0';
  uint64_t start_time = 0;
  bool stopped() const { return state == 'T' || state == 't'; }
};
bool process_state(pid_t pid, ProcessState* out);

// The mark of a stopped server: "<pid> <start time> <unix time>\n".
inline std::string stopped_mark_path(const std::string& dir) {
  return dir + "/stopped";
}
// The pid of the server `dir`'s mark names when that process is still
// stopped; otherwise 0, and a mark left is removed (the server was continued
// or is gone: it is asked again, or a new one started).
pid_t marked_stopped(const std::string& dir);
// Leaves the mark for the stopped server `pid` (replacing any).
void mark_stopped(const std::string& dir, pid_t pid, const ProcessState& state);

// The process at the other end of a connected Unix socket (the server), or 0.
pid_t peer_pid(int fd);

// Waits up to `total_ms` for `fd` to have something to read. After a short
// moment, and then every 50 ms, the server's process state is looked at: a
// stopped one is marked and given up on at once; a running one (busy, on a
// loaded machine) is waited for up to the bound.
enum class ReplyWait { kReady, kTimedOut, kStopped };
ReplyWait wait_for_reply(int fd, int total_ms, const std::string& dir, pid_t* stopped_pid);

}  // namespace lexpack::server
