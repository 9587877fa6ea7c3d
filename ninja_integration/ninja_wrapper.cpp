// Starting ninja with the plugin: fork, set the plugin's environment in the
// child, exec ninja; the parent waits like a shell does, leaving terminal
// signals to ninja, and passes SIGTERM and SIGHUP on to it.
#include "ninja_integration/ninja_wrapper.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/file_util.h"
#include "base/process.h"

namespace lexpack::ninja_integration {
namespace {

volatile sig_atomic_t g_child_pid = 0;

void forward_signal(int sig) {
  if (g_child_pid > 0) ::kill(g_child_pid, sig);
}

// Runs in the forked child: only setenv and exec, then _exit on failure.
[[noreturn]] void exec_ninja(const std::string& ninja, const std::vector<std::string>& args,
                             const std::string& plugin, const std::string& launcher,
                             const std::string& client) {
  if (!plugin.empty()) {
    const char* old = std::getenv("LD_PRELOAD");
    std::string preload = plugin;
    if (old && *old) preload += std::string(" ") + old;
    ::setenv("LD_PRELOAD", preload.c_str(), 1);
    ::setenv("LEXPACK_NINJA_PID", std::to_string(::getpid()).c_str(), 1);
    ::setenv("LEXPACK_NINJA_LAUNCHER", launcher.c_str(), 1);
    if (!client.empty()) ::setenv("LEXPACK_NINJA_CLIENT", client.c_str(), 1);
  }
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>("ninja"));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(ninja.c_str(), argv.data());
  _exit(127);
}

}  // namespace

void make_cache_dir_absolute() {
  const char* dir = std::getenv("LEXPACK_DIR");
  if (!dir || !*dir || dir[0] == '/') return;
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd)) ::setenv("LEXPACK_DIR", (std::string(cwd) + "/" + dir).c_str(), 1);
}

NinjaRun run_ninja(const std::vector<std::string>& args, const std::string& plugin,
                   const std::string& launcher, const std::string& client) {
  NinjaRun run;
  const char* env_ninja = std::getenv("LEXPACK_NINJA");
  std::string ninja = base::find_program(env_ninja && *env_ninja ? env_ninja : "ninja");
  if (ninja.empty()) {
    run.error = "ninja not found in PATH";
    return run;
  }
  std::string use_plugin = plugin;
  if (plugin.empty()) {
    run.warning = "the ninja plugin was not found; building without the cache";
  } else if (launcher.empty() || launcher[0] != '/') {
    run.warning = "cannot tell where lexpack is; building without the cache";
    use_plugin.clear();
  }
  // Ignore terminal signals from now on, before the child exists, and let
  // the child restore them: a Ctrl-C then reaches ninja alone and ninja
  // decides how the build ends.
  struct sigaction ignore {
  }, forward{}, old_int{}, old_quit{}, old_term{}, old_hup{};
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = forward_signal;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    exec_ninja(ninja, args, use_plugin, launcher, client);
  }
  if (pid < 0) {
    run.error = std::string("cannot start ninja: ") + std::strerror(errno);
  } else {
    g_child_pid = pid;
    ::sigaction(SIGTERM, &forward, &old_term);
    ::sigaction(SIGHUP, &forward, &old_hup);
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    g_child_pid = 0;
    ::sigaction(SIGTERM, &old_term, nullptr);
    ::sigaction(SIGHUP, &old_hup, nullptr);
    if (r < 0) {
      run.error = std::string("waiting for ninja: ") + std::strerror(errno);
    } else {
      run.started = true;
      if (WIFSIGNALED(status)) {
        run.term_signal = WTERMSIG(status);
        run.exit_code = 128 + run.term_signal;
      } else {
        run.exit_code = WEXITSTATUS(status);
      }
    }
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  return run;
}

std::string start_launcher_report() {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/lexpack-launchers-XXXXXX";
  int fd = ::mkstemp(path.data());
  if (fd < 0) return {};
  ::close(fd);
  ::setenv("LEXPACK_NINJA_REPORT", path.c_str(), 1);
  return path;
}

OtherLaunchers finish_launcher_report(const std::string& path) {
  OtherLaunchers others;
  if (path.empty()) return others;
  ::unsetenv("LEXPACK_NINJA_REPORT");
  base::Result<std::string> text = base::read_file(path);
  ::unlink(path.c_str());
  if (!text.ok()) return others;
  for (size_t pos = 0; pos < text->size();) {
    size_t nl = text->find('\n', pos);
    if (nl == std::string::npos) break;
    if (others.compiles++ == 0) others.first = text->substr(pos, nl - pos);
    pos = nl + 1;
  }
  return others;
}

std::string launcher_hint(const OtherLaunchers& others, bool before_build) {
  if (others.compiles == 0) return {};
  const bool one = others.compiles == 1;
  const std::string what =
      before_build ? std::string(one ? " runs" : " run") + " behind another launcher (" +
                         others.first + "), which the build leaves " + (one ? "it" : "them") + " to"
                   : " already went through another launcher (" + others.first + ") and " +
                         (one ? "was" : "were") + " left to it";
  return std::to_string(others.compiles) + (one ? " compile" : " compiles") + what + "; to cache " +
         (one ? "it" : "them") +
         ", configure without that launcher (CMake: unset CMAKE_<LANG>_COMPILER_LAUNCHER; "
         "Meson, which picks up ccache or sccache by itself: set CC and CXX to the compiler "
         "alone when first configuring)";
}

}  // namespace lexpack::ninja_integration
