// `lexpack ninja`: runs the system ninja with the plugin preloaded so that
// every compile edge goes through the launcher, and hands back ninja's own
// exit status. Whatever goes wrong with the plugin, ninja still runs.
#pragma once

#include <string>
#include <vector>

namespace lexpack::ninja_integration {

struct NinjaRun {
  bool started = false;  // false: ninja could not be run (see error)
  std::string error;
  std::string warning;  // ninja ran without the plugin, and why
  int exit_code = 0;    // ninja's exit code when it exited normally
  int term_signal = 0;  // non-zero: ninja was killed by this signal
};

// Makes a relative LEXPACK_DIR absolute: compiles run in other directories
// (ninja -C, compile database entries) and must reach the same cache.
void make_cache_dir_absolute();

// Runs `ninja` (from PATH, or LEXPACK_NINJA if set) with `args`, inheriting
// the terminal and the environment. With a plugin, ninja gets it preloaded,
// LEXPACK_NINJA_PID set to ninja's pid, LEXPACK_NINJA_LAUNCHER to
// `launcher` and, when `client` names lexpack-client (the server is on),
// LEXPACK_NINJA_CLIENT to it: compiles then start the client. SIGINT and
// SIGQUIT are left to ninja while it runs.
NinjaRun run_ninja(const std::vector<std::string>& args, const std::string& plugin,
                   const std::string& launcher, const std::string& client = {});

// Compiles that already go through another launcher ("ccache g++ -c ..."),
// which the plugin leaves alone: it appends one line per such compile, the
// launcher's word, to the file LEXPACK_NINJA_REPORT names.
struct OtherLaunchers {
  size_t compiles = 0;
  std::string first;  // the launcher of the first one
};
// Creates that file and sets LEXPACK_NINJA_REPORT for ninja; "" when it
// cannot (then nothing is reported). Both change the environment: called
// while no other thread runs.
std::string start_launcher_report();
// Reads the file, removes it and unsets the variable.
OtherLaunchers finish_launcher_report(const std::string& path);
// What to tell the user about them; "" when there were none. `before_build`:
// said of the compiles a build will run (lexpack warm), not of those it ran.
std::string launcher_hint(const OtherLaunchers& others, bool before_build = false);

}  // namespace lexpack::ninja_integration
