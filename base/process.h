// Running the real compiler: once with its output streams captured (a miss,
// or a question to the compiler), or by replacing this process (passthrough),
// so that stdin, stdout, stderr and the exit status are the compiler's own.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace lexpack::base {

struct ProcessResult {
  bool started = false;  // false: the program could not be run (see error)
  std::string error;
  int exit_code = 0;  // 128 + signal number when killed by a signal
  std::string out;
  std::string err;
  uint64_t elapsed_us = 0;  // wall time, from start to exit
  // CPU time (user + system) of the program and every descendant it waited
  // for (a compiler driver's cc1plus and as): what running it cost, unlike
  // the wall time, which grows with whatever else the machine is running.
  uint64_t cpu_us = 0;
};

// Runs argv (argv[0] searched in PATH) with stdin inherited or /dev/null and
// both output streams captured; in this process's environment, or in `env`
// ("NAME=value" entries) when given.
ProcessResult run_captured(const std::vector<std::string>& argv, bool stdin_null,
                           const std::vector<std::string>* env = nullptr,
                           std::atomic<int>* running_pid = nullptr);
// `running_pid`, when given, holds the program's pid from its start until it
// has exited and before it is reaped (0 otherwise): another thread may
// signal that pid while it is set, with no risk of the pid being reused.

// Stops `pid` and the processes it started (a compiler driver's cc1plus and
// as): each is sent SIGTERM, the driver held stopped meanwhile so that it
// starts no other. For a process this one started and has not reaped.
void stop_process_tree(int pid);

// Runs each command as run_captured(argv, true) does, all at the same time;
// results in the order of `commands`. For questions to a compiler, which are
// independent and each cost a process start.
std::vector<ProcessResult> run_captured_all(const std::vector<std::vector<std::string>>& commands);

// Replaces the current process by argv. Returns only on failure, with the
// error (which names the program and errno).
Status exec_replace(const std::vector<std::string>& argv);

// The file that running `name` would execute: `name` itself when it has a '/',
// else the first executable match in PATH. Empty when there is none.
std::string find_program(std::string_view name);

// CPU time (user + system) of this process so far, every thread's, not its
// children's: what lexpack itself cost, for the decision log.
uint64_t own_cpu_us();

// Writes all of `bytes` to a file descriptor, retrying short writes.
bool write_all(int fd, std::string_view bytes);

}  // namespace lexpack::base
