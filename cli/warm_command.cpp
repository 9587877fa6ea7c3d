// `lexpack warm -C <builddir>`: before a build, tells how many compiles of
// the build would hit the cache, so a CI job can see whether its restored
// cache fits. The keys are computed in this process (one shared file graph,
// all cores), and with a remote configured the entries missing locally are
// fetched in batches (one round trip per batch), so the build finds them in
// the local store. `-v` asks the launcher's explain mode instead, per compile,
// for the reason of each miss.
#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>

#include "base/heap_pages.h"
#include "base/process.h"
#include "base/program_paths.h"
#include "base/run_on_threads.h"
#include "cache/config/config.h"
#include "cache/remote/local_copy.h"
#include "cache/remote/remote_tier.h"
#include "cache/store.h"
#include "cli/commands.h"
#include "compiler/compile_command.h"
#include "launcher/prefetch.h"
#include "ninja_integration/ninja_wrapper.h"
#include "scan/compdb.h"
#include "server/server_client.h"

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
  bool fetch = true;
};

// Fetches the entries of `keys` from the configured remotes into the local
// store; how many were stored (0 when no remote is configured).
size_t prefetch(const std::vector<cache::Hash128>& keys) {
  cache::Config config = cache::load_config("");
  std::string error;
  std::unique_ptr<cache::remote::RemoteTier> tier = cache::remote::RemoteTier::open(config, &error);
  if (!error.empty()) std::fprintf(stderr, "lexpack: warning: %s\n", error.c_str());
  if (!tier || keys.empty()) return 0;
  auto store = cache::Store::open(cache::StoreOptions{});
  if (!store.ok()) {
    std::fprintf(stderr, "lexpack: warning: not fetched: %s\n", store.message().c_str());
    return 0;
  }
  cache::Store& s = *store.value();
  auto count = [&s](std::string_view name, int64_t delta) { s.add_counter(name, delta); };
  std::string note;
  std::vector<std::optional<cache::remote::RemoteEntry>> got = tier->fetch_many(keys, count, &note);
  size_t stored = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (got[i] && cache::remote::store_entry(s, keys[i], *got[i])) ++stored;
  }
  if (note.find("failed") != std::string::npos || note.find("timed out") != std::string::npos ||
      note.find("refused") != std::string::npos) {
    std::fprintf(stderr, "lexpack: warning: %s\n", note.c_str());
  }
  return stored;
}

// The counts from keys computed in this process: a compile whose entry is in
// the local store would hit, one with a key would miss, one without is not
// cacheable.
int warm_in_process(const WarmArgs& a, const std::vector<const scan::CompdbEntry*>& entries) {
  std::vector<launcher::PrefetchCompile> compiles;
  compiles.reserve(entries.size());
  for (const scan::CompdbEntry* e : entries) compiles.push_back({e->directory, e->argv});
  launcher::PrefetchOptions options;
  options.jobs = a.jobs;
  options.fetch = a.fetch;
  launcher::PrefetchResult r = launcher::prefetch_compiles(compiles, options);
  // The server (started above) checks the compiles that would hit now, so
  // that the build finds them answered from memory.
  if (server::server_enabled()) {
    std::vector<server::Request::Compile> hitting;
    for (size_t i = 0; i < compiles.size(); ++i) {
      if (r.keys[i] && (r.local[i] || r.fetched_now[i])) {
        hitting.push_back({compiles[i].directory, compiles[i].argv});
      }
    }
    server::prepare_compiles(std::move(hitting), server::kPrepareWaitMs);
  }
  size_t hits = 0, misses = 0, other = 0, left = 0;
  for (size_t i = 0; i < compiles.size(); ++i) {
    if (!r.keys[i] && r.why_not[i].starts_with("not prefetched: takes")) {
      ++left;  // keyed when the build runs it (a precompiled header it takes made first)
    } else if (!r.keys[i]) {
      ++other;
    } else if (r.local[i]) {
      ++hits;
    } else {
      ++misses;
    }
  }
  if (!r.note.empty()) std::fprintf(stderr, "lexpack: warning: %s\n", r.note.c_str());
  std::string fetched;
  if (r.fetched > 0)
    fetched = "; " + std::to_string(r.fetched) + " of them fetched from the remote";
  if (left > 0) fetched += "; " + std::to_string(left) + " keyed only when built";
  std::fprintf(stderr,
               "lexpack: warm: %zu compiles, %zu would hit, %zu would miss, %zu uncacheable%s\n",
               compiles.size(), hits, misses, other, fetched.c_str());
  return 0;
}

int run_warm(const WarmArgs& a) {
  // Hundreds of megabytes of tables, built once and freed at exit.
  base::use_huge_heap_pages(size_t(128) << 20);
  ninja_integration::make_cache_dir_absolute();
  // The build that follows finds the server up (on unless LEXPACK_SERVER=0).
  if (server::server_enabled()) server::start_server();
  auto entries = scan::compdb_from_ninja(a.build_dir);
  if (!entries.ok()) {
    std::fprintf(stderr, "lexpack: error: %s\n", entries.message().c_str());
    return 1;
  }
  // A compile behind another launcher is left to it by the build: no
  // question of a hit or a miss.
  std::vector<const scan::CompdbEntry*> compiles;
  ninja_integration::OtherLaunchers behind;
  for (const scan::CompdbEntry& e : *entries) {
    if (!compiler::parse_compile_command(e.argv).uncacheable.empty()) continue;
    if (e.launcher.empty()) {
      compiles.push_back(&e);
      continue;
    }
    if (behind.compiles++ == 0) behind.first = e.launcher;
    if (a.verbose) {
      std::printf("%s -> %s: left to %s by the build\n", e.file.c_str(), e.output.c_str(),
                  e.launcher.c_str());
    }
  }
  if (behind.compiles > 0) {
    std::fprintf(stderr, "lexpack: note: %s\n",
                 ninja_integration::launcher_hint(behind, true).c_str());
  }
  if (!a.verbose) return warm_in_process(a, compiles);
  std::string self = base::self_executable();
  std::atomic<size_t> next{0}, hits{0}, misses{0}, other{0};
  std::mutex print_mu;
  std::vector<cache::Hash128> missing;  // action keys of the compiles that would miss
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < compiles.size();) {
      const scan::CompdbEntry& e = *compiles[i];
      std::string cmd = "cd " + quote(e.directory) + " && exec " + quote(self) + " explain";
      for (const std::string& arg : e.argv) cmd += " " + quote(arg);
      base::ProcessResult p = base::run_captured({"/bin/sh", "-c", cmd}, true);
      // The first line may say what the server would answer; the verdict
      // wanted is the launcher's own, below it.
      if (p.out.starts_with("server: ")) p.out.erase(0, p.out.find('\n') + 1);
      std::string verdict = "unknown";
      size_t at = p.out.rfind("would ");
      if (at == std::string::npos) at = p.out.rfind("passthrough: ");
      if (at != std::string::npos) verdict = p.out.substr(at, p.out.find('\n', at) - at);
      if (verdict == "would hit") {
        ++hits;
      } else if (verdict.starts_with("would miss")) {
        ++misses;
        cache::Hash128 key;
        size_t k = p.out.rfind("action key: ");
        if (k != std::string::npos && cache::Hash128::from_hex(p.out.substr(k + 12, 32), &key)) {
          std::lock_guard lock(print_mu);
          missing.push_back(key);
        }
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
  base::run_on_threads(int(n), work);
  std::string fetched;
  if (a.fetch && !missing.empty()) {
    size_t n = prefetch(missing);
    if (n > 0) fetched = "; " + std::to_string(n) + " of them fetched from the remote";
  }
  std::fprintf(stderr,
               "lexpack: warm: %zu compiles, %zu would hit, %zu would miss, %zu uncacheable%s\n",
               compiles.size(), hits.load(), misses.load(), other.load(), fetched.c_str());
  return 0;
}

}  // namespace

void add_warm_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<WarmArgs>();
  CLI::App* sub =
      app.add_subcommand("warm", "Tell how many compiles of a build would hit, before building");
  sub->add_option("-C", args->build_dir, "Build directory (ninja)")->required();
  sub->add_option("-j,--jobs", args->jobs, "Parallel questions (default: one per core)");
  sub->add_flag("-v,--verbose", args->verbose,
                "One line per compile, with the reason of each miss (runs the launcher's explain "
                "per compile)");
  sub->add_flag("!--no-fetch", args->fetch,
                "Do not fetch the missing entries from the remote (remote_storage)");
  sub->callback([args, exit_code] { *exit_code = run_warm(*args); });
}

}  // namespace lexpack::cli
