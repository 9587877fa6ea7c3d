// The set of inputs a compile depends on, found without running the
// preprocessor: the source, every file its #include directives reach (all
// #if branches counted), each failed search candidate and __has_include answer.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_stat.h"
#include "base/status.h"
#include "cache/hash/hash.h"
#include "cache/store.h"
#include "closure/file_state.h"
#include "closure/resolution.h"
#include "compiler/compile_command.h"
#include "compiler/identify_compiler.h"
#include "compiler/search_list.h"
#include "preprocessor/macro_reads.h"

namespace lexpack::closure {

class ScanFileCache;

struct ClosureFile {
  std::string_view path;  // as the compiler names it (in the walk's graph: Closure::storage)
  base::StatSignature stat;
  cache::Hash128 content;      // zero for presence-only entries
  bool presence_only = false;  // reached only by __has_include
  // In a whole-build scan: the path made absolute and lexically normal (it
  // lives in the scan's shared graph); empty otherwise.
  std::string_view normal;
  // A precompiled header the compiler may read in place of its header: in
  // the key by its bytes, never lexed, never served from the packs (the
  // compiler maps it).
  bool opaque = false;
  // An opaque file lexpack made: the relocated key of the compile that made
  // it, in the key in place of its bytes (pch_maker.h); zero otherwise.
  cache::Hash128 made_by{};
  // Holds #pragma once, and another file of the closure has its bytes: gcc
  // may take the two as one by their mtimes, clang by their inodes
  // (once_twins.h). A memo takes any change of its signature as a change.
  bool once_twin = false;
  // An include directive names an absolute path (relocated_content.h).
  bool absolute_includes = false;
};

struct Closure {
  std::vector<ClosureFile> files;  // files[0] is the source
  // Unique, in the order the walk met them; the views point into `storage`.
  // The failed candidates under a missing directory are one probe: its
  // shortest missing prefix, with a trailing '/' (ScanFileCache::absent_root).
  std::vector<std::string_view> failed_probes;
  // Per failed probe, a number for its directory: equal numbers, equal
  // directories (the memo groups probes by it).
  std::vector<uint32_t> failed_probe_dirs;
  // Per failed probe, its candidate number in the scan's graph
  // (ScanFileCache::candidate_ids); empty without a graph.
  std::vector<uint32_t> failed_probe_ids;
  // Every failed probe was found to be no entry at all (not even a dangling
  // symlink) through these shared answers: a memo encoded with the same
  // ones takes that answer instead of asking each again.
  const ScanFileCache* failed_probes_answered_by = nullptr;
  std::shared_ptr<const void> storage;
  // What preprocessing reads of the source (FileSummary::preprocessing).
  cache::Hash128 source_preprocessing;
  bool uses_date = false;
  bool uses_time = false;  // __TIME__ or __TIMESTAMP__
  // A computed include (`#include MACRO`) the walk met and did not follow:
  // the files it names are known only from the compiler's depfile.
  bool has_computed_include = false;
  bool presence_evaluated = false;  // macro-reached __has_include answered by evaluation
  // Every computed include was expanded by an exact evaluation: the files
  // they name are walked like direct includes (content in the key, search
  // candidates among the failed probes).
  bool computed_evaluated = false;
  std::string unsure;  // non-empty: the closure cannot be trusted (why)
  // Unsure because assembly reaches gas's .include or .incbin (files that
  // only the assembler reads, named neither by the walk nor the depfile).
  bool assembler_include = false;
  // A -include/-imacros file is not there (a generated header not made
  // yet): the compiler fails on this command until it is.
  bool forced_missing = false;
  // How the #pragma once twins split by mtime second and by inode (for the
  // key); empty without twins.
  std::string once_twins;
  // The macro names the TU's evaluation looked up, when one ran and was
  // exact; null when none ran (then presence_evaluated and
  // computed_evaluated are false, and the walk followed every #include
  // whatever the macros).
  std::shared_ptr<const preprocessor::MacroReads> macro_reads;
  // inert_fingerprint() of the source by macro_reads (note_source_inert);
  // zero when not known.
  cache::Hash128 source_inert;
};

// Answers the __has_include questions a TU asks only through macros (an
// alias, a wrapper, a paste), which the walk cannot see: it evaluates the
// TU's conditionals, asking each question through `ask`, which resolves it
// as the walk does and records the answer and its failed candidates in the
// closure (like a direct __has_include).
class PresenceEvaluator {
 public:
  virtual ~PresenceEvaluator() = default;
  // The answer stays valid as long as the closure being computed.
  using Ask = std::function<const Resolution&(std::string_view name, bool angled, bool next,
                                              const Resolution& includer)>;
  // "" when every question the compiler can ask was asked; else why not (the
  // closure stays unsure with that reason).
  virtual std::string evaluate(const Resolution& source, const std::vector<Resolution>& forced,
                               const Ask& ask) = 0;
  // True: run for every TU, not only those that reach __has_include through
  // a macro (a scan's exact dependencies); its answer then makes the closure
  // unsure only when such a question was met.
  virtual bool every_tu() const { return false; }
  // After an evaluate() that returned "": what each computed #include of the
  // TU found (in the order met), each also given to `ask` during evaluate().
  virtual std::vector<Resolution> computed_includes() const { return {}; }
  // After an evaluate() that returned "": every macro name it looked up.
  virtual std::shared_ptr<const preprocessor::MacroReads> macro_reads() const { return nullptr; }
  // After an evaluate() that returned "": the signature of each file the TU
  // entered (the source and forced includes too), each once; empty when the
  // evaluator does not tell (the walk's files are then all kept).
  virtual std::vector<base::StatSignature> entered_files() const { return {}; }
};

// Walks the includes of `command`'s source and forced includes. `presence`,
// when given, is run when the walk met a macro-reached __has_include or a
// computed include; when it is exact, the files computed includes name are
// walked too.
base::Result<Closure> compute_closure(FileStates* files, const compiler::CompileCommand& command,
                                      const compiler::SearchList& list, compiler::CompilerKind kind,
                                      const std::string& cwd,
                                      PresenceEvaluator* presence = nullptr);

// A scan's first pass: expands (reads, lexes, resolves the includes of) every
// file `command`'s closure reaches through any branch of a directive, as
// compute_closure would, into `files`' shared graph, skipping every node an
// earlier call already reached, so that each is traversed once per scan
// rather than once per TU. Computed includes are not followed; errors are
// left for compute_closure to report. Does nothing without a shared graph.
void expand_reachable(FileStates* files, const compiler::CompileCommand& command,
                      const compiler::SearchList& list, compiler::CompilerKind kind,
                      const std::string& cwd);

}  // namespace lexpack::closure
