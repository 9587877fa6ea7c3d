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
#include "compiler/compile_command.h"
#include "ninja_integration/ninja_deps_reader.h"
#include "scan/compdb.h"
#include "scan/scan_memo.h"

namespace lexpack::scan {

struct TuScan {
  std::string directory;
  std::string source;  // as in the entry
  std::string output;  // as in the entry (or the command's -o)
  // Absolute, normalized, sorted; the source first. Views into strings
  // `deps_owner` keeps alive (own_deps()): the TUs answered by one memo
  // share one table of paths instead of a string per dependency each.
  std::vector<std::string_view> deps;
  std::shared_ptr<const void> deps_owner;
  std::string skipped;     // non-empty: not scanned, and why
  bool compiles = true;    // false: a step that compiles nothing (a link)
  bool from_memo = false;  // nothing it rests on changed since its last scan
  // The store's memo of this TU holds this answer (from_memo, or stored by
  // this scan): a group memo may be made of it.
  bool remembered = false;
  // Exact: `deps` are the files the compiler reads (only taken branches),
  // from the evaluation of the TU's conditionals and computed includes, or
  // from the compiler itself (`from_compiler`). Else `inexact` says why, and
  // `deps` are a superset (every branch counted).
  bool exact = false;
  bool from_compiler = false;  // deps came from a -M run of the compiler
  std::string inexact;
  // Lines of the source's module declarations and imports in taken
  // branches; meaningful when `modules_exact`.
  bool modules_exact = false;
  std::vector<uint32_t> module_lines;
};

// Makes `paths` the deps of `tu`, kept alive by it.
// Whether `cmd` reads its files as a compile does, so that its includes can
// be scanned: a compile the cache leaves out may (coverage and profiles,
// -save-temps, -S, -E, -M, modules). A flag that may change what the
// preprocessor reads (-Xclang, -Wp, -specs, -include-pch, -ivfsoverlay, -B),
// or what the compiler's own -dM and -M runs print or write (-###,
// -ftime-trace, ...), keeps it out, as does anything that is not a compile
// of a known language: a link, a packaging step, a custom command (whose
// program is then never run to ask who it is).
bool scannable(const compiler::CompileCommand& cmd);

void own_deps(TuScan* tu, std::vector<std::string> paths);

struct ScanProgress {
  std::atomic<uint64_t> tus_done{0};
  std::atomic<uint64_t> files_read{0};
};

struct ScanReport {
  std::vector<TuScan> tus;     // in compile-database order
  uint64_t scanned = 0;        // TUs with a closure
  uint64_t from_memo = 0;      // of those, answered by their scan memo
  uint64_t from_group = 0;     // of those, answered by their directory's group memo
  uint64_t exact = 0;          // of those, exact (TuScan::exact)
  uint64_t from_compiler = 0;  // of the exact ones, asked of the compiler
  uint64_t unique_files = 0;
  uint64_t unique_bytes = 0;  // size of the unique files
  uint64_t elapsed_us = 0;
  // Where elapsed_us went, summed over the build's directories (wall
  // time; the phases do not overlap).
  struct Phases {
    uint64_t group_memo_us = 0;  // compiler identities, TU keys and group memos checked
    uint64_t questions_us = 0;   // search lists asked ahead
    uint64_t walk_us = 0;        // memos, else every branch walked (files read and lexed)
    uint64_t evaluate_us = 0;    // the walked TUs evaluated (and their builtin questions)
    uint64_t remember_us = 0;    // the group memos made
    uint64_t write_us = 0;       // what the scan learned written to the index
  } phases;
  // What the scan learned about files (its include graph), freed with it.
  std::shared_ptr<const void> graph;
};

// `store` may be null (no caches). `jobs` <= 0: one per core. Works from
// inside each entry's directory in turn (chdir), and returns to the old one.
// `known`: what `lexpack server` answered, per entry, taken instead of
// scanning that entry.
ScanReport scan_build(const std::vector<CompdbEntry>& entries, cache::Store* store, int jobs,
                      ScanProgress* progress, const KnownScans* known = nullptr);

// The order in which scan_build() takes the entries `group` names (indexes
// into `entries`): first one TU of each set of arguments that decides the
// compiler's predefined macros (the same compiler, language and arguments
// but for include directories, source and output), then the others in their
// order. The first TU of a set waits on the compiler's answers; taken in the
// entries' order, a set met last would wait alone at the end of the scan, one
// thread idle. The report keeps the entries' order.
std::vector<size_t> scan_order(const std::vector<CompdbEntry>& entries,
                               const std::vector<size_t>& group);

// Leaves `report` to the end of the process instead of freeing it one
// allocation at a time just before exit (tens of ms for a large build); it
// stays reachable from a static, so it is not a leak.
void keep_until_exit(ScanReport report);
// Make-style rules, one per scanned TU: "output: source dep...".
std::string format_make(const ScanReport& report);
// The same rules handed to `sink` in pieces of about 64 kB; false as soon as
// the sink returns false.
bool write_make(const ScanReport& report, const std::function<bool(std::string_view)>& sink);
// {"tus": [{"directory", "source", "output", "exact", "deps": [...]}, ...]},
// with "inexact" (why) for TUs that are not exact and "from_compiler" for
// those whose deps came from the compiler.
std::string format_json(const ScanReport& report);

struct CheckFinding {
  std::string output;
  std::vector<std::string> missed;  // the compiler read it, the scan did not find it
  std::vector<std::string> extra;   // the scan found it, the compiler did not read it
};

// Compares each scanned TU with ninja's record of its output; TUs ninja has no
// record of are counted in *unrecorded. A TU that took a precompiled header
// the report's TUs make (counted in *took_precompiled) is not charged with
// the files that header's TU read: the compiler read them from the header.
std::vector<CheckFinding> check_against_ninja(const ScanReport& report,
                                              const ninja_integration::NinjaDeps& deps,
                                              const std::string& build_dir, uint64_t* unrecorded,
                                              uint64_t* took_precompiled);

}  // namespace lexpack::scan
