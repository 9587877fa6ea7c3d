// posix_spawn with two pipes drained by poll(), so a compiler that writes a
// lot to both streams never blocks; exec for passthrough.
#include "base/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

extern char** environ;

namespace lexpack::base {
namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  out.reserve(argv.size() + 1);
  for (const std::string& s : argv) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(size_t(n));
  }
  return true;
}

std::string find_program(std::string_view name) {
  if (name.empty()) return {};
  if (name.find('/') != std::string_view::npos) return std::string(name);
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    std::string candidate =
        dir.empty() ? std::string(name) : std::string(dir) + "/" + std::string(name);
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return {};
}

uint64_t own_cpu_us() {
  struct rusage u {};
  if (::getrusage(RUSAGE_SELF, &u) != 0) return 0;
  auto us = [](const struct timeval& t) {
    return uint64_t(t.tv_sec) * 1000000 + uint64_t(t.tv_usec);
  };
  return us(u.ru_utime) + us(u.ru_stime);
}

ProcessResult run_captured(const std::vector<std::string>& argv, bool stdin_null,
                           const std::vector<std::string>* env, std::atomic<int>* running_pid) {
  ProcessResult result;
  auto start = std::chrono::steady_clock::now();
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdin_null) posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  std::vector<char*> args = c_argv(argv);
  pid_t pid = 0;
  std::vector<char*> envp;
  if (env) envp = c_argv(*env);
  int rc =
      ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), env ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    result.error = "cannot run " + argv[0] + ": " + std::strerror(rc);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return result;
  }
  result.started = true;
  if (running_pid) running_pid->store(pid);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_count = 2;
  char buf[65536];
  while (open_count > 0) {
    int n = ::poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, size_t(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  for (pollfd& p : fds) {
    if (p.fd >= 0) ::close(p.fd);
  }
  int status = 0;
  struct rusage usage {};
  if (running_pid) {
    // Exited, not yet reaped: the pid is still this child's while it is
    // taken back from whoever may signal it.
    siginfo_t info{};
    while (::waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
    }
    running_pid->store(0);
  }
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  auto micros = [](const timeval& t) { return uint64_t(t.tv_sec) * 1000000 + uint64_t(t.tv_usec); };
  result.cpu_us = micros(usage.ru_utime) + micros(usage.ru_stime);
  result.elapsed_us = uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now() - start)
                                   .count());
  return result;
}

namespace {

// The pids whose parent is `parent`, from /proc (the kernel's per-task
// children lists are not always built in).
std::vector<int> children_of(int parent) {
  std::vector<int> out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  while (struct dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[512];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) continue;
    buf[n] = '\0';
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const char* close_paren = std::strrchr(buf, ')');
    int ppid = 0;
    char state = 0;
    if (close_paren && std::sscanf(close_paren + 1, " %c %d", &state, &ppid) == 2 &&
        ppid == parent) {
      out.push_back(std::atoi(e->d_name));
    }
  }
  ::closedir(proc);
  return out;
}

}  // namespace

void stop_process_tree(int pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGSTOP);
  std::vector<int> tree = children_of(pid);
  for (size_t i = 0; i < tree.size(); ++i) {
    for (int grandchild : children_of(tree[i])) tree.push_back(grandchild);
  }
  for (int child : tree) ::kill(child, SIGTERM);
  ::kill(pid, SIGTERM);
  ::kill(pid, SIGCONT);
}

std::vector<ProcessResult> run_captured_all(const std::vector<std::vector<std::string>>& commands) {
  std::vector<ProcessResult> results(commands.size());
  std::vector<std::thread> threads;
  threads.reserve(commands.size());
  for (size_t i = 1; i < commands.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = run_captured(commands[i], true); });
  }
  if (!commands.empty()) results[0] = run_captured(commands[0], true);
  for (std::thread& t : threads) t.join();
  return results;
}

Status exec_replace(const std::vector<std::string>& argv) {
  std::vector<char*> args = c_argv(argv);
  ::execvp(args[0], args.data());
  return Status::error("cannot run " + argv[0] + ": " + std::strerror(errno));
}

}  // namespace lexpack::base
