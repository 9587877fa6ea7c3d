// `lexpack ninja [ninja arguments...]`: the build through ninja with every
// compile routed to the launcher by the plugin; ninja's output and exit status
// unchanged, then one summary line on stderr.
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/file_util.h"
#include "base/program_paths.h"
#include "cache/config/config.h"
#include "cache/remote/remote_tier.h"
#include "cache/remote/upload_queue.h"
#include "cli/commands.h"
#include "compiler/compile_command.h"
#include "launcher/decision_log.h"
#include "launcher/prefetch.h"
#include "ninja_integration/build_counts.h"
#include "ninja_integration/build_record.h"
#include "ninja_integration/build_summary.h"
#include "ninja_integration/ninja_log.h"
#include "ninja_integration/ninja_wrapper.h"
#include "scan/compdb.h"
#include "server/server_client.h"

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

// The build directory ninja runs in: its -C argument, from here.
std::string build_directory(const std::vector<std::string>& args) {
  std::string dir = ".";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == "-C" && i + 1 < args.size())
      dir = args[++i];
    else if (args[i].starts_with("-C") && args[i].size() > 2)
      dir = args[i].substr(2);
  }
  char buf[PATH_MAX];
  if (::realpath(dir.c_str(), buf)) return buf;
  char cwd[PATH_MAX];
  return ::getcwd(cwd, sizeof cwd) ? base::absolute_path(dir, cwd) : dir;
}

// lexpack-client beside lexpack when the server is on: the compiles start it
// instead of lexpack (a hit then costs no start of the full program).
std::string server_client(const std::string& self) {
  if (!server::server_enabled() || self.empty() || self[0] != '/') return {};
  std::string client = std::string(base::dir_of(self)) + "/lexpack-client";
  return ::access(client.c_str(), X_OK) == 0 ? client : std::string();
}

// Whether ninja reads a manifest other than build.ninja (-f), which the
// compile database of the build directory would not describe.
bool other_manifest(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--") break;
    if (a == "-f" || (a.starts_with("-f") && a.size() > 2)) return true;
  }
  return false;
}

// The compiles of the build whose object is not there yet (a fresh
// checkout, a clean build): ninja will run them. None when every output
// ninja logged is there and the manifest is no newer than the log (an
// incremental build): the compile database, a parse of the whole manifest
// by ninja, is not asked for then. A compile ninja never ran (a build that
// stopped early) is then left to look its entry up itself.
std::vector<launcher::PrefetchCompile> compiles_to_run(const std::string& build_dir) {
  std::vector<launcher::PrefetchCompile> compiles;
  if (ninja_integration::every_logged_output_exists(build_dir)) return compiles;
  auto entries = scan::compdb_from_ninja(build_dir);
  if (!entries.ok()) return compiles;
  for (const scan::CompdbEntry& e : *entries) {
    if (e.output.empty() || e.argv.empty()) continue;
    if (!compiler::parse_compile_command(e.argv).uncacheable.empty()) continue;  // links too
    std::string output = base::absolute_path(e.output, e.directory);
    if (::access(output.c_str(), F_OK) == 0) continue;  // ninja may not run it
    compiles.push_back({e.directory, e.argv});
  }
  return compiles;
}

// With a remote, those compiles get their keys computed here, all at once,
// and their entries fetched in batches before ninja starts, so that they are
// local hits. Best effort: whatever fails is left to each compile.
struct PrefetchSummary {
  size_t compiles = 0, fetched = 0;
  int64_t us = 0;
  std::string note;
};
// Ninja starts no compile before the prefetch ends: past this long it begins
// no other chunk, and the compiles left look their entries up themselves.
constexpr int kPrefetchDeadlineMs = 10000;

PrefetchSummary prefetch_build(const std::vector<launcher::PrefetchCompile>& compiles,
                               std::function<void(std::vector<size_t>)> memos_stored) {
  PrefetchSummary s;
  if (compiles.empty()) return s;
  auto start = std::chrono::steady_clock::now();
  launcher::PrefetchOptions options;
  options.stop_when_remote_lacks = true;  // machine A: the compiles will store them
  options.deadline_ms = kPrefetchDeadlineMs;
  options.memos_stored = std::move(memos_stored);
  launcher::PrefetchResult r = launcher::prefetch_compiles(compiles, options);
  s.compiles = compiles.size();
  s.fetched = r.fetched;
  if (!r.phases.empty()) {
    launcher::DecisionLog log;
    log.set_subject("prefetch");
    log.write("took " + r.phases);
  }
  s.note = r.note;
  s.us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                               start)
             .count();
  return s;
}

// A server that has not checked these compiles yet (started by this build,
// or their entries just fetched) checks them now, in one request, so that
// each is answered from memory when ninja runs it, instead of each launcher
// checking its own closure. Bounded: a build never waits long for it.
// Gives what the server said and how long the build waited for it (since
// `start`, by default the request's), and (with `answered`) which compiles
// it answers from memory.
std::string prepare_server(
    const std::vector<launcher::PrefetchCompile>& compiles, std::vector<bool>* answered = nullptr,
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now()) {
  std::vector<server::Request::Compile> batch;
  batch.reserve(compiles.size());
  for (const launcher::PrefetchCompile& c : compiles) batch.push_back({c.directory, c.argv});
  std::optional<server::Prepared> said =
      server::prepare_compiles(std::move(batch), server::kPrepareWaitMs);
  if (!said) return {};
  if (answered) *answered = std::move(said->answered);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start);
  return said->said + " (" + std::to_string(ms.count()) + " ms)";
}

// The server's checks of the compiles whose closure memos the prefetch has
// stored, on a thread of their own while the prefetch keys the rest: what
// was queued meanwhile goes in one request, and none goes after a request
// no server answered. finish() leaves what is still queued (the build's
// last request asks about every compile) and waits for the request under
// way, which the server bounds (kBatchCheckBudget).
class ServerChecks {
 public:
  ~ServerChecks() { finish(); }
  void add(std::vector<launcher::PrefetchCompile> compiles) {
    std::lock_guard<std::mutex> lock(m_);
    if (done_) return;
    for (launcher::PrefetchCompile& c : compiles) queued_.push_back(std::move(c));
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    more_.notify_one();
  }
  void finish() {
    {
      std::lock_guard<std::mutex> lock(m_);
      done_ = true;
      queued_.clear();
      more_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      more_.wait(lock, [this] { return done_ || !queued_.empty(); });
      if (done_) return;
      std::vector<launcher::PrefetchCompile> compiles = std::move(queued_);
      queued_.clear();
      lock.unlock();
      const bool answered = !prepare_server(compiles).empty();
      lock.lock();
      if (!answered) done_ = true;
    }
  }

  std::mutex m_;
  std::condition_variable more_;
  std::vector<launcher::PrefetchCompile> queued_;
  bool done_ = false;
  std::thread thread_;
};

bool env_off(const char* name) {
  const char* v = std::getenv(name);
  return v && std::string_view(v) == "0";
}
bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

// The number after "\n<name> " in a status reply, or -1.
long status_count(const std::string& info, const std::string& name) {
  const std::string line = "\n" + name + " ";
  const size_t at = ("\n" + info).find(line);
  if (at == std::string::npos) return -1;
  return std::strtol(info.c_str() + at + line.size() - 1, nullptr, 10);
}

// Starts the server for this build (on unless LEXPACK_SERVER=0); true when
// it is new, or as good as new.
bool start_build_server() {
  bool new_server = false;
  server::start_server(false, &new_server);
  // A server that trusts fewer than half the entries it knows is as good as
  // new (one that just saw a cold build: it checks no compile that ran the
  // compiler until asked). One that does not answer is leaving (just
  // stopped, or another binary's): its replacement is started, and waits
  // for it to go.
  if (!new_server) {
    std::optional<server::Reply> status = server::control(server::RequestKind::kStatus);
    if (!status) {
      server::start_server(true, &new_server);
    } else {
      const long entries = status_count(status->info, "entries");
      const long trusted = status_count(status->info, "trusted");
      new_server = trusted <= 0 || entries > 2 * trusted;
    }
  }
  return new_server;
}

// What was done before ninja starts: the prefetch, and the server's checks.
struct AheadOfNinja {
  std::optional<PrefetchSummary> prefetched;
  std::string prepared;  // what the server said (prepare_server())
};

// The compiles ninja will run: their entries fetched from the remote
// (`prefetch`), and checked by the server (`client` non-empty) when it is new
// or the prefetch fetched some.
AheadOfNinja get_ahead_of_ninja(const std::string& build_dir, bool prefetch,
                                const std::string& client, bool new_server) {
  AheadOfNinja ahead;
  std::optional<PrefetchSummary>& prefetched = ahead.prefetched;
  std::string& prepared = ahead.prepared;
  std::vector<launcher::PrefetchCompile> compiles = compiles_to_run(build_dir);
  // A running server answers from memory the compiles whose closures it
  // checked already (a rebuild after `ninja -t clean`, say): their entries
  // are local, and the prefetch leaves them out instead of checking each
  // closure again.
  std::vector<launcher::PrefetchCompile> to_fetch;
  if (prefetch && !client.empty() && !new_server) {
    std::vector<bool> answered;
    prepare_server(compiles, &answered);
    for (size_t i = 0; i < compiles.size(); ++i) {
      if (i >= answered.size() || !answered[i]) to_fetch.push_back(compiles[i]);
    }
  } else if (prefetch) {
    to_fetch = compiles;
  }
  if (prefetch) {
    launcher::DecisionLog log;
    log.set_subject("prefetch");
    log.write(std::to_string(to_fetch.size()) + " of " + std::to_string(compiles.size()) +
              " compiles to run keyed (the others answered by the server)");
  }
  // A new server checks the closures the prefetch computed while it keys
  // the rest and their entries are being fetched (it needs their memos, not
  // their entries); then every compile once more, which says how many it
  // answers from memory (those checked already cost a lookup).
  ServerChecks checks;
  if (!to_fetch.empty()) {
    std::function<void(std::vector<size_t>)> check_early;
    if (!client.empty() && new_server) {
      check_early = [&](std::vector<size_t> keyed) {
        std::vector<launcher::PrefetchCompile> batch;
        for (size_t i : keyed) batch.push_back(to_fetch[i]);
        checks.add(std::move(batch));
      };
    }
    prefetched = prefetch_build(to_fetch, std::move(check_early));
  }
  const auto prefetch_end = std::chrono::steady_clock::now();
  checks.finish();
  if (!client.empty() && !compiles.empty() &&
      (new_server || (prefetched && prefetched->fetched > 0))) {
    prepared = prepare_server(compiles, nullptr, prefetch_end);
  }
  return ahead;
}

// The lines on stderr about what happened beside ninja's build: the
// uploads, the prefetch, the server's checks, remotes that were down.
void print_beside_ninja(cache::remote::Uploader* uploader, bool ninja_signalled,
                        const AheadOfNinja& ahead, const cache::Config* config,
                        int64_t start_unix) {
  const std::optional<PrefetchSummary>& prefetched = ahead.prefetched;
  const std::string& prepared = ahead.prepared;
  if (uploader) {
    cache::remote::Uploader::Summary up = uploader->finish(!ninja_signalled);
    if (up.queued > 0) {
      std::string after;
      if (up.drain_us >= 100000)
        after += " (" + std::to_string(up.drain_us / 1000) + " ms after the build)";
      if (up.waiting > 0) after += "; " + std::to_string(up.waiting) + " wait for the next build";
      std::fprintf(stderr, "lexpack: %llu of %llu stored entries uploaded to the remote%s\n",
                   static_cast<unsigned long long>(up.uploaded),
                   static_cast<unsigned long long>(up.queued), after.c_str());
    }
  }
  if (prefetched && prefetched->fetched > 0) {
    std::fprintf(stderr, "lexpack: %zu of %zu compiles prefetched from the remote (%lld ms)\n",
                 prefetched->fetched, prefetched->compiles,
                 static_cast<long long>(prefetched->us / 1000));
  }
  // Nothing to say when it knew none of them yet (a cold build).
  if (!prepared.empty() && !prepared.starts_with("0 of ")) {
    std::fprintf(stderr, "lexpack: checked ahead by the server: %s\n", prepared.c_str());
  }
  if (prefetched && !prefetched->note.empty()) {
    std::fprintf(stderr, "lexpack: warning: prefetch: %s\n", prefetched->note.c_str());
  }
  if (config) {
    for (const std::string& down : cache::remote::RemoteTier::down_reports(*config, start_unix)) {
      std::fprintf(stderr, "lexpack: warning: %s\n", down.c_str());
    }
  }
}

int run_ninja_command(const std::vector<std::string>& args) {
  ninja_integration::make_cache_dir_absolute();
  std::string self = base::self_executable();
  std::string plugin = base::find_plugin(self);
  std::optional<ninja_integration::Counters> before;
  if (builds(args) && !plugin.empty()) before = ninja_integration::read_store_counters();
  // The keys this build hits or stores, for `lexpack export --working-set`.
  cache::Config config = cache::load_config("");
  std::string cache_dir = config.dir, record;
  if (before) {
    for (const std::string& w : config.warnings) {
      std::fprintf(stderr, "lexpack: warning: %s\n", w.c_str());
    }
    if (!config.remote_storage.empty() && !config.remote_secret_error.empty()) {
      std::fprintf(stderr, "lexpack: error: %s\n", config.remote_secret_error.c_str());
    }
  }
  const std::string build_dir = build_directory(args);
  if (before && !cache_dir.empty()) {
    if (auto r = ninja_integration::start_build_record(cache_dir, build_dir,
                                                       cache::FileModes::from(config));
        r.ok()) {
      record = *r;
      ::setenv(ninja_integration::kBuildRecordEnv, record.c_str(), 1);
    }
  }
  // This build's own counts (not the cache's shared counters, which other
  // builds move too and a read-only cache does not).
  std::string counts_file;
  if (before) {
    if (auto c = ninja_integration::start_build_counts(); c.ok()) {
      counts_file = *c;
      ::setenv(ninja_integration::kBuildCountsEnv, counts_file.c_str(), 1);
    }
  }
  // The prefetch opens and closes its own store before the uploader opens
  // one: an index must not be open twice in one process at once (closing one
  // would drop the process's lock on it under the other).
  // The server (on unless LEXPACK_SERVER=0) is started now, beside the
  // prefetch, so that the build's first compiles find it up.
  const std::string client = server_client(self);
  bool new_server = false;
  if (before && !client.empty()) new_server = start_build_server();
  auto start = std::chrono::steady_clock::now();
  const int64_t start_unix = static_cast<int64_t>(::time(nullptr));
  AheadOfNinja ahead;
  const bool prefetch = before && !config.remote_storage.empty() && !other_manifest(args) &&
                        !env_off("LEXPACK_PREFETCH") && !env_on("LEXPACK_DISABLE");
  if (prefetch || (new_server && !other_manifest(args))) {
    ahead = get_ahead_of_ninja(build_dir, prefetch, client, new_server);
  }
  // The environment is set for ninja before the uploader's thread starts and
  // unset after it stopped: glibc's setenv may free the array another
  // thread's getenv (the store's configuration, libcurl's proxies) reads.
  std::string report = before ? ninja_integration::start_launcher_report() : std::string();
  // Compiles stored in this build are uploaded by one thread of this process
  // while ninja runs, not by each compile (the build never waits on a PUT).
  std::unique_ptr<cache::remote::Uploader> uploader;
  if (before) uploader = cache::remote::Uploader::start(config);
  ninja_integration::NinjaRun run = ninja_integration::run_ninja(args, plugin, self, client);
  std::optional<ninja_integration::Counters> counts;
  if (!counts_file.empty()) {
    counts = ninja_integration::read_build_counts(counts_file);
    ::unlink(counts_file.c_str());
  }
  if (!record.empty()) {
    if (base::Status s = ninja_integration::finish_build_record(cache_dir, record, build_dir);
        !s.ok())
      std::fprintf(stderr, "lexpack: warning: build record: %s\n", s.message().c_str());
  }
  auto wall = std::chrono::steady_clock::now() - start;
  print_beside_ninja(uploader.get(), run.term_signal != 0, ahead, before ? &config : nullptr,
                     start_unix);
  uploader.reset();  // its thread stopped in print_beside_ninja
  std::string hint =
      ninja_integration::launcher_hint(ninja_integration::finish_launcher_report(report));
  if (!run.warning.empty()) std::fprintf(stderr, "lexpack: warning: %s\n", run.warning.c_str());
  if (!run.started) {
    std::fprintf(stderr, "lexpack: error: %s\n", run.error.c_str());
    return 127;
  }
  if (before && run.term_signal == 0) {
    if (counts) {
      ninja_integration::BuildSummary s =
          ninja_integration::summarize_build(ninja_integration::Counters{}, *counts);
      int64_t wall_us = std::chrono::duration_cast<std::chrono::microseconds>(wall).count();
      if (!hint.empty()) std::fprintf(stderr, "lexpack: note: %s\n", hint.c_str());
      std::string links = ninja_integration::format_link_summary(s);
      if (!links.empty()) std::fprintf(stderr, "%s\n", links.c_str());
      std::fprintf(stderr, "%s\n", ninja_integration::format_summary(s, wall_us).c_str());
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
