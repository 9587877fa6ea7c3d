// `lexpack warm -C <builddir>`: before a build, asks the launcher's explain
// mode for every compile of the build (all cores) and reports how many would
// hit the cache, so a CI job can see whether its restored cache fits.
#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>

#include "base/process.h"
#include "cli/commands.h"
#include "ninja_integration/command/compile_command.h"
#include "ninja_integration/ninja/ninja_wrapper.h"
#include "ninja_integration/scan/compdb.h"

namespace lexpack::cli {
namespace {

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct WarmArgs {
  std::string build_dir;
  int jobs = 0;
  bool verbose = false;
};

int run_warm(const WarmArgs& a) {
  ninja::make_cache_dir_absolute();
  auto entries = scan::compdb_from_ninja(a.build_dir);
  if (!entries.ok()) {
    std::fprintf(stderr, "lexpack: error: %s\n", entries.message().c_str());
    return 1;
  }
  std::vector<const scan::CompdbEntry*> compiles;
  for (const scan::CompdbEntry& e : *entries) {
    if (command::parse_compile_command(e.argv).uncacheable.empty()) compiles.push_back(&e);
  }
  std::string self = ninja::self_executable();
  std::atomic<size_t> next{0}, hits{0}, misses{0}, other{0};
  std::mutex print_mu;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < compiles.size();) {
      const scan::CompdbEntry& e = *compiles[i];
      std::string cmd = "cd " + quote(e.directory) + " && exec " + quote(self) + " explain";
      for (const std::string& arg : e.argv) cmd += " " + quote(arg);
      base::ProcessResult p = base::run_captured({"/bin/sh", "-c", cmd}, true);
      std::string verdict = "unknown";
      size_t at = p.out.rfind("would ");
      if (at == std::string::npos) at = p.out.rfind("passthrough: ");
      if (at != std::string::npos) verdict = p.out.substr(at, p.out.find('\n', at) - at);
      if (verdict == "would hit") {
        ++hits;
      } else if (verdict.starts_with("would miss")) {
        ++misses;
      } else {
        ++other;
      }
      if (a.verbose) {
        // By output too: one source may be compiled into several objects.
        std::lock_guard lock(print_mu);
        if (e.output.empty()) {
          std::printf("%s: %s\n", e.file.c_str(), verdict.c_str());
        } else {
          std::printf("%s -> %s: %s\n", e.file.c_str(), e.output.c_str(), verdict.c_str());
        }
      }
    }
  };
  unsigned n = a.jobs > 0 ? unsigned(a.jobs) : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < n; ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  std::fprintf(stderr,
               "lexpack: warm: %zu compiles, %zu would hit, %zu would miss, %zu uncacheable\n",
               compiles.size(), hits.load(), misses.load(), other.load());
  return 0;
}

}  // namespace

void add_warm_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<WarmArgs>();
  CLI::App* sub =
      app.add_subcommand("warm", "Tell how many compiles of a build would hit, before building");
  sub->add_option("-C", args->build_dir, "Build directory (ninja)")->required();
  sub->add_option("-j,--jobs", args->jobs, "Parallel questions (default: one per core)");
  sub->add_flag("-v,--verbose", args->verbose, "One line per compile");
  sub->callback([args, exit_code] { *exit_code = run_warm(*args); });
}

}  // namespace lexpack::cli
