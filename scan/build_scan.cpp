// Scanning every TU of a build: workers take entries from a shared counter,
// each with its own FileStates over one locked store and one scan-wide file
// cache (each header stat'ed and loaded once per scan), and keep the closure
// as absolute normalized paths so that builds and ninja's records compare.
// One directory at a time: its group memo, else its TUs in two passes.
#include "scan/build_scan.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <unistd.h>

#include "base/heap_pages.h"
#include "base/run_on_threads.h"
#include "cache/batching_store.h"
#include "cache/locked_store.h"
#include "closure/file_state.h"
#include "closure/presence_evaluation.h"
#include "closure/scan_file_cache.h"
#include "compiler/compile_command.h"
#include "lexer/kernel.h"
#include "scan/scan_memo.h"
#include "scan/tu_scanner.h"

namespace lexpack::scan {
namespace {

// Answers every entry of `group` from its group memo when nothing any of
// them rests on changed; false (the report untouched) otherwise.
bool answer_group(cache::Store* store, const std::string& key,
                  const std::vector<CompdbEntry>& entries, const std::vector<size_t>& group,
                  ScanReport* report, FileSizes* sizes) {
  KnownScans known;
  bool held = false;
  DirStatCache dirs;
  store->visit_memo(kGroupMemoTable, key, [&](std::string_view bytes) {
    held = check_encoded_group_memo(bytes, &dirs, &known);
  });
  if (!held || known.answers.size() != group.size()) return false;
  // Every TU's deps are views into this one table.
  auto paths = std::make_shared<const std::vector<std::string>>(std::move(known.paths));
  std::vector<TuScan> answered;
  answered.reserve(group.size());
  FileSizes group_sizes;
  for (size_t k = 0; k < group.size(); ++k) {
    std::optional<TuScan> tu =
        Scanner::from_known(entries[group[k]], known.answers[k], paths, &group_sizes);
    if (!tu) return false;
    answered.push_back(std::move(*tu));
  }
  for (size_t k = 0; k < group.size(); ++k) report->tus[group[k]] = std::move(answered[k]);
  sizes->merge(group_sizes);
  return true;
}

// Stores the group memo of `group` (the entries' order, each with its key in
// `tu_keys`) when every entry's memo holds this scan's answer. Each memo is
// read where the store holds it; the group memo keeps what it needs.
void remember_group(cache::Store* store, const std::string& key, const std::vector<size_t>& group,
                    const std::vector<std::string>& tu_keys, const ScanReport& report) {
  GroupMemoBuilder builder;
  for (size_t k = 0; k < group.size(); ++k) {
    const TuScan& tu = report.tus[group[k]];
    if (!tu.skipped.empty() || !tu.remembered) return;
    std::optional<std::string> exact = store->get_memo(kExactMemoTable, tu_keys[k]);
    bool added = false;
    if (exact) {
      store->visit_memo(kScanMemoTable, tu_keys[k],
                        [&](std::string_view memo) { added = builder.add(memo, *exact); });
    }
    if (!added) return;
  }
  store->put_memo(kGroupMemoTable, key, builder.encode());
}

// What every directory's scan shares: the entries, the caches, the report.
struct BuildScan {
  const std::vector<CompdbEntry>& entries;
  const KnownScans* known;
  // The server's answers name their paths in one table, shared by their TUs.
  std::shared_ptr<const std::vector<std::string>> known_paths;
  const lexer::Kernel* kernel;
  std::string kernel_error;
  cache::BatchingStore* batching;
  cache::LockedStore* locked;
  Scanner* scanner;
  closure::ScanFileCache* shared_files;
  ScanProgress* progress;
  int jobs;
  ScanReport* report;
  std::mutex merge_mu;
  FileSizes all_sizes;
};

// Adds the time since the last call to a phase of the report.
class PhaseClock {
 public:
  void took(uint64_t* phase) {
    auto now = std::chrono::steady_clock::now();
    *phase += uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(now - mark_).count());
    mark_ = now;
  }

 private:
  std::chrono::steady_clock::time_point mark_ = std::chrono::steady_clock::now();
};

// One pass over the entries `order` names, on `run.jobs` threads; an entry
// the walk leaves for the evaluation is marked in `walked`.
void run_pass(BuildScan& run, const std::vector<size_t>& order, Scanner::Pass pass,
              std::vector<char>* walked) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    base::use_huge_thread_heap_pages();
    closure::FileStates files(run.locked, run.kernel);
    files.share(run.shared_files);
    DirStatCache dirs;
    FileSizes sizes;
    uint64_t read_before = 0;
    for (size_t k; (k = next.fetch_add(1)) < order.size();) {
      size_t i = order[k];
      std::optional<TuScan> answered;
      if (pass == Scanner::Pass::kWalk && run.known && i < run.known->answers.size() &&
          !run.known->answers[i].empty()) {
        answered =
            Scanner::from_known(run.entries[i], run.known->answers[i], run.known_paths, &sizes);
      }
      if (answered) {
        run.report->tus[i] = std::move(*answered);
      } else if (!run.kernel) {
        run.report->tus[i].skipped = "lexer: " + run.kernel_error;
      } else if (std::optional<TuScan> tu =
                     run.scanner->scan(run.entries[i], &files, &dirs, &sizes, pass)) {
        run.report->tus[i] = std::move(*tu);
      } else {
        (*walked)[i] = 1;  // its own slot: no other thread writes it
      }
      if (run.progress) {
        run.progress->files_read += files.files_read() - read_before;
        read_before = files.files_read();
        if (!(*walked)[i] || pass == Scanner::Pass::kEvaluate) ++run.progress->tus_done;
      }
    }
    std::lock_guard lock(run.merge_mu);
    run.all_sizes.merge(sizes);
  };
  base::run_on_threads(std::min<int>(run.jobs, int(order.size())), work);
}

// Scans the entries `group` names, all of directory `dir` (the working
// directory by now).
void scan_directory(BuildScan& run, const std::string& dir, std::vector<size_t> group,
                    PhaseClock* clock) {
  ScanReport::Phases& phases = run.report->phases;
  // A warm scan of an unchanged group: one memo for all its TUs. No
  // worker runs yet, so the memo is read where the store holds it.
  std::vector<std::string> tu_keys;
  std::optional<std::string> group_key;
  if (run.locked && run.kernel)
    group_key = run.scanner->group_key(run.entries, group, dir, &tu_keys);
  if (group_key &&
      answer_group(run.batching, *group_key, run.entries, group, run.report, &run.all_sizes)) {
    run.report->from_group += group.size();
    if (run.progress) run.progress->tus_done += group.size();
    return;
  }
  clock->took(&phases.group_memo_us);
  if (run.kernel) run.scanner->ask_ahead(run.entries, group, dir);
  clock->took(&phases.questions_us);
  const std::vector<size_t> in_order = group;
  group = scan_order(run.entries, group);
  // Two passes: first each TU's memo, else its walk over every branch
  // (the shared graph: each file read and lexed once); then the walked
  // TUs are evaluated. The first question a set of arguments asks the
  // compiler then names every builtin query written in any file a TU of
  // the scan reaches, instead of a TU that meets a new one asking again.
  std::vector<char> walked(run.entries.size(), 0);
  run_pass(run, group, Scanner::Pass::kWalk, &walked);
  clock->took(&phases.walk_us);
  std::vector<size_t> rest;
  for (size_t i : group) {
    if (walked[i]) rest.push_back(i);
  }
  if (!rest.empty()) run_pass(run, rest, Scanner::Pass::kEvaluate, &walked);
  clock->took(&phases.evaluate_us);
  if (group_key) remember_group(run.locked, *group_key, in_order, tu_keys, *run.report);
  clock->took(&phases.remember_us);
}

// The report's totals, from its TUs and the sizes of the files they read.
void count_totals(const FileSizes& all_sizes, ScanReport* report) {
  for (const TuScan& tu : report->tus) {
    report->scanned += tu.skipped.empty();
    report->from_memo += tu.from_memo;
    if (tu.skipped.empty()) {
      report->exact += tu.exact;
      report->from_compiler += tu.from_compiler;
    }
  }
  report->unique_files = all_sizes.size();
  for (const auto& [path, size] : all_sizes) report->unique_bytes += size;
}

}  // namespace

bool scannable(const compiler::CompileCommand& cmd) {
  static constexpr std::string_view kScannable[] = {
      "",
      "modules",
      "profile_or_coverage",
      "save_temps",
      "no_object_output",
      "dependencies_only",
      "preprocess_only",
  };
  if (!cmd.compiles || cmd.language == compiler::Language::kNone) return false;
  for (std::string_view r : kScannable) {
    if (cmd.uncacheable == r) return true;
  }
  return false;
}

void own_deps(TuScan* tu, std::vector<std::string> paths) {
  auto owned = std::make_shared<const std::vector<std::string>>(std::move(paths));
  tu->deps.assign(owned->begin(), owned->end());
  tu->deps_owner = std::move(owned);
}

std::vector<size_t> scan_order(const std::vector<CompdbEntry>& entries,
                               const std::vector<size_t>& group) {
  std::set<std::string> seen;
  std::vector<size_t> firsts, rest;
  for (size_t i : group) {
    const compiler::CompileCommand cmd = compiler::parse_compile_command(entries[i].argv);
    std::string key = cmd.compiler;
    key.push_back('\0');
    key.append(compiler::language_name(cmd.language));
    for (const std::string& a : closure::split_macro_arguments(cmd, false).ask)
      key.append(1, '\0').append(a);
    (seen.insert(std::move(key)).second ? firsts : rest).push_back(i);
  }
  firsts.insert(firsts.end(), rest.begin(), rest.end());
  return firsts;
}

ScanReport scan_build(const std::vector<CompdbEntry>& entries, cache::Store* store, int jobs,
                      ScanProgress* progress, const KnownScans* known) {
  auto start = std::chrono::steady_clock::now();
  ScanReport report;
  report.tus.resize(entries.size());
  std::string err;
  const lexer::Kernel* kernel = lexer::default_kernel(&err);
  // What the scan learns goes to the index in batches, not a transaction
  // per file and per TU.
  std::unique_ptr<cache::BatchingStore> batching;
  std::unique_ptr<cache::LockedStore> locked;
  if (store) {
    batching = std::make_unique<cache::BatchingStore>(store);
    locked = std::make_unique<cache::LockedStore>(batching.get());
  }
  Scanner scanner(locked.get(), kernel);
  auto graph = std::make_shared<closure::ScanFileCache>();
  scanner.share_files(graph);
  report.graph = graph;
  if (jobs <= 0) jobs = int(std::max(1u, std::thread::hardware_concurrency()));
  BuildScan run{entries,        known,        nullptr,  kernel,      err,
                batching.get(), locked.get(), &scanner, graph.get(), progress,
                jobs,           &report,      {},       {}};
  if (known) run.known_paths = std::make_shared<const std::vector<std::string>>(known->paths);
  // Paths in a command are relative to its directory, and the resolver stats
  // them as given: scan one directory at a time from inside it.
  std::map<std::string, std::vector<size_t>> by_dir;
  for (size_t i = 0; i < entries.size(); ++i) by_dir[entries[i].directory].push_back(i);
  char old_cwd[4096];
  bool have_old_cwd = ::getcwd(old_cwd, sizeof old_cwd) != nullptr;
  PhaseClock clock;
  for (auto& [dir, group] : by_dir) {
    clock.took(&report.phases.group_memo_us);
    if (::chdir(dir.c_str()) != 0) {
      for (size_t i : group) report.tus[i].skipped = "cannot enter directory " + dir;
      continue;
    }
    scan_directory(run, dir, std::move(group), &clock);
  }
  clock.took(&report.phases.group_memo_us);
  if (have_old_cwd && ::chdir(old_cwd) != 0) {
    // The scan is complete; only later relative paths would be affected.
  }
  // A failed write only costs the next scan some work; the report is whole.
  if (locked) locked->flush();
  clock.took(&report.phases.write_us);
  count_totals(run.all_sizes, &report);
  report.elapsed_us = uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now() - start)
                                   .count());
  return report;
}

}  // namespace lexpack::scan
