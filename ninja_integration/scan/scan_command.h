// The whole-build scan behind `lexpack scan`: every TU of a compile database
// gets its dependency closure from the lexer and the store's caches (no
// compiler run beyond the memoized identity and search-list questions), on
// all cores. Also the comparison with what ninja recorded (`--check`).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cache/store.h"
#include "ninja_integration/ninja/ninja_deps_reader.h"
#include "ninja_integration/scan/compdb.h"

namespace lexpack::scan {

struct TuScan {
  std::string directory;
  std::string source;             // as in the entry
  std::string output;             // as in the entry (or the command's -o)
  std::vector<std::string> deps;  // absolute, normalized, sorted; the source first
  std::string skipped;            // non-empty: not scanned, and why
  bool from_memo = false;         // nothing it rests on changed since its last scan
};

struct ScanProgress {
  std::atomic<uint64_t> tus_done{0};
  std::atomic<uint64_t> files_read{0};
};

struct ScanReport {
  std::vector<TuScan> tus;  // in compile-database order
  uint64_t scanned = 0;     // TUs with a closure
  uint64_t from_memo = 0;   // of those, answered by their scan memo
  uint64_t unique_files = 0;
  uint64_t unique_bytes = 0;  // size of the unique files
  uint64_t elapsed_us = 0;
  // What the scan learned about files (its include graph), freed with it.
  std::shared_ptr<const void> graph;
};

// `store` may be null (no caches). `jobs` <= 0: one per core. Works from
// inside each entry's directory in turn (chdir), and returns to the old one.
ScanReport scan_build(const std::vector<CompdbEntry>& entries, cache::Store* store, int jobs,
                      ScanProgress* progress);

// Leaves `report` to the end of the process instead of freeing it one
// allocation at a time just before exit (tens of ms for a large build); it
// stays reachable from a static, so it is not a leak.
void keep_until_exit(ScanReport report);
// Make-style rules, one per scanned TU: "output: source dep...".
std::string format_make(const ScanReport& report);
// {"tus": [{"directory", "source", "output", "deps": [...]}, ...]}
std::string format_json(const ScanReport& report);

struct CheckFinding {
  std::string output;
  std::vector<std::string> missed;  // the compiler read it, the scan did not find it
  std::vector<std::string> extra;   // the scan found it, the compiler did not read it
};

// Compares each scanned TU with ninja's record of its output; TUs ninja has no
// record of are counted in *unrecorded.
std::vector<CheckFinding> check_against_ninja(const ScanReport& report,
                                              const ninja::NinjaDeps& deps,
                                              const std::string& build_dir, uint64_t* unrecorded);

}  // namespace lexpack::scan
