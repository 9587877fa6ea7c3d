// A server whose process is stopped (SIGSTOP, a suspended job, a debugger)
// accepts connections but never answers: waiting for it would cost every
// compile the whole wait. The first client to find it stopped leaves a mark
// beside the socket, and later ones skip the server at the cost of reading
// that mark, until the process runs again or is gone. A running server that
// lets a compile wait the whole reply bound (deadlocked, or starved on a
// machine far past its cores) is marked too, for kUnansweredSeconds: then
// one compile asks it again. One that was working all along (its CPU time
// grew, or a child it started, such as the compiler it asks, still runs) is
// only busy: that compile takes its own path, and nothing is marked.
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
  // Clock ticks of CPU used by the process and by the children it waited for.
  uint64_t cpu_ticks = 0;
  bool stopped() const { return state == 'T' || state == 't'; }
};
bool process_state(pid_t pid, ProcessState* out);
// Whether process `pid` was working between `before` and now: its CPU time
// grew, or a child of it is alive (a compiler it runs). A deadlocked process
// uses none; a starved one gets none.
bool process_working(pid_t pid, const ProcessState& before);

// Why a server is not asked.
enum class Unavailable { kStopped, kUnanswered };
constexpr long kUnansweredSeconds = 30;
// What a client says of a marked server in its log ("is stopped; ...").
const char* unavailable_text(Unavailable why);

// The mark: "<pid> <start time> <unix time> <stopped|unanswered>\n". The
// file keeps the name it had when stopped was its only reason: lexpack-client
// skips the server while any mark exists.
inline std::string stopped_mark_path(const std::string& dir) {
  return dir + "/stopped";
}
// The pid of the server `dir`'s mark names while the mark holds (a stopped
// one still stopped; an unanswering one the same process, marked less than
// kUnansweredSeconds ago), with *why; otherwise 0, and a mark left is
// removed (the server was continued, is gone, or is given another chance).
pid_t marked_unavailable(const std::string& dir, Unavailable* why = nullptr);
// Leaves the mark for server `pid` (replacing any).
void mark_unavailable(const std::string& dir, pid_t pid, const ProcessState& state,
                      Unavailable why);
// Marks the running server `pid` as unanswered, when it is still the process
// it was (lexpack-client waited for it and passed its pid on).
void mark_unanswered(const std::string& dir, pid_t pid);

// The process at the other end of a connected Unix socket (the server), or 0.
pid_t peer_pid(int fd);

// Waits up to `total_ms` for `fd` to have something to read. After a short
// moment, and then every 50 ms, the server's process state is looked at: a
// stopped one is marked and given up on at once; a running one (busy, on a
// loaded machine) is waited for up to the bound, and then, with
// `mark_if_unanswered`, marked. *marked_pid: the server marked, or left.
enum class ReplyWait { kReady, kTimedOut, kStopped };
ReplyWait wait_for_reply(int fd, int total_ms, const std::string& dir, pid_t* marked_pid,
                         bool mark_if_unanswered = false);

}  // namespace lexpack::server
