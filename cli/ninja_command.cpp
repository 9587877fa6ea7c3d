// `lexpack ninja [ninja arguments...]`: the build through ninja with every
// compile routed to the launcher by the plugin; ninja's output and exit status
// unchanged, then one summary line on stderr.
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/config.h"
#include "cli/commands.h"
#include "ninja_integration/launcher/build_record.h"
#include "ninja_integration/ninja/build_summary.h"
#include "ninja_integration/ninja/ninja_wrapper.h"

namespace lexpack::cli {
namespace {

// Ninja's tools and informational flags build nothing: no summary for them.
bool builds(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a == "--") break;
    if (a == "-t" || a.starts_with("-t") || a == "--version" || a == "-h" || a == "--help" ||
        a == "-n")
      return false;
    if (a == "-C" || a == "-f" || a == "-j" || a == "-k" || a == "-l" || a == "-d" || a == "-w")
      ++i;  // skip the option's value
  }
  return true;
}

int run_ninja_command(const std::vector<std::string>& args) {
  ninja::make_cache_dir_absolute();
  std::string self = ninja::self_executable();
  std::string plugin = ninja::find_plugin(self);
  std::optional<ninja::Counters> before;
  if (builds(args) && !plugin.empty()) before = ninja::read_store_counters();
  // The keys this build hits or stores, for `lexpack export --working-set`.
  std::string cache_dir = cache::load_config("").dir, record;
  if (before && !cache_dir.empty()) {
    if (auto r = launcher::start_build_record(cache_dir); r.ok()) {
      record = *r;
      ::setenv(launcher::kBuildRecordEnv, record.c_str(), 1);
    }
  }
  auto start = std::chrono::steady_clock::now();
  ninja::NinjaRun run = ninja::run_ninja(args, plugin, self);
  if (!record.empty()) {
    if (base::Status s = launcher::finish_build_record(cache_dir, record); !s.ok())
      std::fprintf(stderr, "lexpack: warning: build record: %s\n", s.message().c_str());
  }
  auto wall = std::chrono::steady_clock::now() - start;
  if (!run.warning.empty()) std::fprintf(stderr, "lexpack: warning: %s\n", run.warning.c_str());
  if (!run.started) {
    std::fprintf(stderr, "lexpack: error: %s\n", run.error.c_str());
    return 127;
  }
  if (before && run.term_signal == 0) {
    if (std::optional<ninja::Counters> after = ninja::read_store_counters()) {
      ninja::BuildSummary s = ninja::summarize_build(*before, *after);
      int64_t wall_us = std::chrono::duration_cast<std::chrono::microseconds>(wall).count();
      std::string links = ninja::format_link_summary(s);
      if (!links.empty()) std::fprintf(stderr, "%s\n", links.c_str());
      std::fprintf(stderr, "%s\n", ninja::format_summary(s, wall_us).c_str());
    }
  }
  if (run.term_signal != 0) {
    std::fflush(nullptr);
    ::signal(run.term_signal, SIG_DFL);
    ::raise(run.term_signal);
  }
  return run.exit_code;
}

}  // namespace

void add_ninja_command(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "ninja", "Run ninja with every C/C++ compile going through the cache (ninja's arguments)");
  sub->prefix_command();
  sub->set_help_flag();
  sub->callback([sub, exit_code] { *exit_code = run_ninja_command(sub->remaining()); });
}

}  // namespace lexpack::cli
