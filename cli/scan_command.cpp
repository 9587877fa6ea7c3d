// `lexpack scan`: the dependency closure of every TU of a build at once,
// from `ninja -t compdb` (-C) or a compile_commands.json (--compdb), written
// as Make rules, JSON or P1689 module dependencies; `--check` compares it
// with ninja's .ninja_deps.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "base/heap_pages.h"
#include "base/process.h"
#include "cache/store.h"
#include "cli/commands.h"
#include "lexer/kernel.h"
#include "ninja_integration/ninja_deps_reader.h"
#include "scan/build_scan.h"
#include "scan/compdb.h"
#include "scan/module_deps.h"
#include "server/server_client.h"

namespace lexpack::cli {
namespace {

struct ScanArgs {
  std::string build_dir;
  std::string compdb;
  std::string format = "make";
  std::string output;
  bool check = false;
  bool timings = false;
  int jobs = 0;
};

// A progress line on stderr while the scan runs, when stderr is a terminal.
class ProgressLine {
 public:
  ProgressLine(scan::ScanProgress* p, size_t total) : p_(p), total_(total) {
    if (::isatty(STDERR_FILENO)) thread_ = std::thread([this] { loop(); });
  }
  ~ProgressLine() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
    std::fprintf(stderr, "\r\033[K");
  }

 private:
  void loop() {
    auto start = std::chrono::steady_clock::now();
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return done_; })) {
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      uint64_t done = p_->tus_done, files = p_->files_read;
      int width = 30, fill = total_ ? int(width * done / total_) : width;
      std::fprintf(stderr, "\r[%s%s] %llu/%zu TUs, %llu files read, %.0f files/s",
                   std::string(size_t(fill), '#').c_str(),
                   std::string(size_t(width - fill), '.').c_str(), (unsigned long long)done, total_,
                   (unsigned long long)files, s > 0 ? files / s : 0.0);
    }
  }
  scan::ScanProgress* p_;
  size_t total_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

// Writes the scan's answer in the format asked for, to -o or stdout; false
// (after saying why) when it cannot.
bool write_scan_output(const ScanArgs& a, const scan::ScanReport& report) {
  std::string text;
  if (a.format == "make") {
    // Written as it is made: a large build's rules are megabytes.
    FILE* f = a.output.empty() ? nullptr : std::fopen(a.output.c_str(), "wb");
    if (!a.output.empty() && !f) {
      std::fprintf(stderr, "lexpack: error: cannot write %s\n", a.output.c_str());
      return false;
    }
    bool ok = scan::write_make(report, [&](std::string_view piece) {
      if (!f) return base::write_all(STDOUT_FILENO, piece);
      return std::fwrite(piece.data(), 1, piece.size(), f) == piece.size();
    });
    if ((f && std::fclose(f) != 0) || !ok) {
      std::fprintf(stderr, "lexpack: error: cannot write %s\n",
                   a.output.empty() ? "standard output" : a.output.c_str());
      return false;
    }
  } else if (a.format == "p1689") {
    std::string err;
    const lexer::Kernel* kernel = lexer::default_kernel(&err);
    if (!kernel) {
      std::fprintf(stderr, "lexpack: error: lexer: %s\n", err.c_str());
      return false;
    }
    auto p1689 = scan::format_p1689(report, *kernel);
    if (!p1689.ok()) {
      std::fprintf(stderr, "lexpack: error: %s\n", p1689.message().c_str());
      return false;
    }
    text = std::move(*p1689);
  } else {
    text = scan::format_json(report);
  }
  if (a.format == "make") {
    // Written above.
  } else if (a.output.empty()) {
    base::write_all(STDOUT_FILENO, text);
  } else if (FILE* f = std::fopen(a.output.c_str(), "wb")) {
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !ok) {
      std::fprintf(stderr, "lexpack: error: cannot write %s\n", a.output.c_str());
      return false;
    }
  } else {
    std::fprintf(stderr, "lexpack: error: cannot write %s\n", a.output.c_str());
    return false;
  }
  return true;
}

// Compiles left out of the output, by reason (the most common first); a
// build's link steps are no news.
void print_not_scanned(const scan::ScanReport& report) {
  std::map<std::string, uint64_t> skipped;
  for (const scan::TuScan& tu : report.tus) {
    if (!tu.skipped.empty() && tu.compiles) ++skipped[tu.skipped];
  }
  if (!skipped.empty()) {
    std::vector<std::pair<uint64_t, std::string>> by_count;
    uint64_t total = 0;
    for (const auto& [why, n] : skipped) {
      by_count.emplace_back(n, why);
      total += n;
    }
    std::sort(by_count.begin(), by_count.end(),
              [](const auto& x, const auto& y) { return x.first > y.first; });
    std::string line = "lexpack: " + std::to_string(total) + " compiles not scanned:";
    constexpr size_t kShown = 3;
    for (size_t i = 0; i < by_count.size() && i < kShown; ++i) {
      line += (i ? "; " : " ") + std::to_string(by_count[i].first) + " " + by_count[i].second;
    }
    if (by_count.size() > kShown) {
      line += "; and " + std::to_string(by_count.size() - kShown) + " other reasons";
    }
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

// The summary line on stderr, what was not scanned, and with --timings where
// the time went.
void print_scan_summary(const ScanArgs& a, const scan::ScanReport& report) {
  std::fprintf(stderr,
               "lexpack: scanned %llu TUs (%zu entries), %llu unique files, %.1f MB, %.3f s"
               " (%llu TUs unchanged since their last scan); %llu TUs exact"
               " (%llu of them asked of the compiler)\n",
               (unsigned long long)report.scanned, report.tus.size(),
               (unsigned long long)report.unique_files, double(report.unique_bytes) / 1e6,
               double(report.elapsed_us) / 1e6, (unsigned long long)report.from_memo,
               (unsigned long long)report.exact, (unsigned long long)report.from_compiler);
  print_not_scanned(report);
  if (a.timings) {
    const scan::ScanReport::Phases& p = report.phases;
    std::fprintf(
        stderr,
        "lexpack: scan took %.1f ms: %.1f compiler identities and group memos, %.1f search "
        "lists asked ahead, %.1f walk, %.1f evaluation, %.1f making group memos, %.1f "
        "writing the index\n",
        double(report.elapsed_us) / 1e3, double(p.group_memo_us) / 1e3,
        double(p.questions_us) / 1e3, double(p.walk_us) / 1e3, double(p.evaluate_us) / 1e3,
        double(p.remember_us) / 1e3, double(p.write_us) / 1e3);
  }
}

// --check: the scan against what ninja recorded; 1 when the scan missed a
// file the compiler read.
int check_with_ninja(const ScanArgs& a, const scan::ScanReport& report) {
  auto deps = ninja_integration::read_ninja_deps(a.build_dir + "/.ninja_deps");
  if (!deps.ok()) {
    std::fprintf(stderr, "lexpack: error: %s\n", deps.message().c_str());
    return 1;
  }
  uint64_t unrecorded = 0, took_precompiled = 0;
  std::vector<scan::CheckFinding> findings =
      scan::check_against_ninja(report, *deps, a.build_dir, &unrecorded, &took_precompiled);
  uint64_t missed_tus = 0, extra_tus = 0;
  for (const scan::CheckFinding& f : findings) {
    missed_tus += !f.missed.empty();
    extra_tus += !f.extra.empty();
    // On stderr: stdout holds the dependencies when no -o takes them.
    for (const std::string& m : f.missed)
      std::fprintf(stderr, "missed %s: %s\n", f.output.c_str(), m.c_str());
    for (const std::string& x : f.extra)
      std::fprintf(stderr, "extra %s: %s\n", f.output.c_str(), x.c_str());
  }
  std::fprintf(stderr,
               "lexpack: check: %llu TUs miss a file the compiler read, %llu have extra files, "
               "%llu not recorded by ninja%s\n",
               (unsigned long long)missed_tus, (unsigned long long)extra_tus,
               (unsigned long long)unrecorded,
               took_precompiled == 0
                   ? ""
                   : ("; " + std::to_string(took_precompiled) +
                      " took a precompiled header (the compiler lists none of the files it holds)")
                         .c_str());
  return missed_tus == 0 ? 0 : 1;
}

int run_scan(const ScanArgs& a) {
  if (a.build_dir.empty() == a.compdb.empty()) {
    std::fprintf(stderr, "lexpack: error: scan needs exactly one of -C <builddir> or --compdb\n");
    return 2;
  }
  if (a.check && a.build_dir.empty()) {
    std::fprintf(stderr, "lexpack: error: --check needs -C <builddir> (it reads .ninja_deps)\n");
    return 2;
  }
  auto entries =
      a.compdb.empty() ? scan::compdb_from_ninja(a.build_dir) : scan::read_compdb(a.compdb);
  if (!entries.ok()) {
    std::fprintf(stderr, "lexpack: error: %s\n", entries.message().c_str());
    return 1;
  }
  cache::StoreOptions options;
  auto store = cache::Store::open(options);
  if (!store.ok()) {
    options.read_only = true;
    store = cache::Store::open(options);
  }
  // Hundreds of megabytes of tables, built once and freed at exit. Asked
  // after the index is open: its 2 MB write buffer, mapped on its own
  // below the threshold this raises, costs nothing until a write touches it
  // (from the heap, calloc would clear it on every scan, warm ones too).
  base::use_huge_heap_pages(size_t(128) << 20);
  scan::ScanProgress progress;
  scan::ScanReport report;
  // Whichever way this returns, the report is not freed piece by piece.
  struct KeepUntilExit {
    scan::ScanReport* report;
    ~KeepUntilExit() { scan::keep_until_exit(std::move(*report)); }
  } keep{&report};
  {
    // A running server answers the TUs whose memo it trusts from memory
    // (nothing they rest on changed since it checked them): no memo read,
    // no stat. The scan checks the rest itself.
    std::optional<scan::KnownScans> known;
    if (server::server_enabled() && store.ok()) {
      std::vector<server::Request::Compile> compiles;
      compiles.reserve(entries->size());
      for (const scan::CompdbEntry& e : *entries) compiles.push_back({e.directory, e.argv});
      known = server::scan_answers(std::move(compiles), server::kPrepareWaitMs);
    }
    ProgressLine line(&progress, entries->size());
    report = scan::scan_build(*entries, store.ok() ? store->get() : nullptr, a.jobs, &progress,
                              known ? &*known : nullptr);
  }
  if (!write_scan_output(a, report)) return 1;
  print_scan_summary(a, report);
  if (!a.check) return 0;
  return check_with_ninja(a, report);
}

}  // namespace

void add_scan_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ScanArgs>();
  CLI::App* sub = app.add_subcommand("scan", "Scan the dependencies of every TU of a build");
  sub->add_option("-C", args->build_dir, "Build directory (compile commands from ninja -t compdb)");
  sub->add_option("--compdb", args->compdb, "compile_commands.json to read instead");
  sub->add_option("--format", args->format,
                  "Output: make, json, or p1689 (C++20 module provides/requires)")
      ->check(CLI::IsMember({"make", "json", "p1689"}));
  sub->add_option("-o,--output", args->output, "Write here instead of stdout");
  sub->add_flag(
      "--check", args->check,
      "Compare with the dependencies ninja recorded (.ninja_deps); fail on a missed file");
  sub->add_option("-j,--jobs", args->jobs, "Threads (default: one per core)");
  sub->add_flag("--timings", args->timings,
                "Print where the scan's time went, by phase, after the summary line");
  sub->callback([args, exit_code] { *exit_code = run_scan(*args); });
}

}  // namespace lexpack::cli
