// A header's evaluation shared across the translation units of one scan: a
// header entered with the same macro state on the names it reads (its
// "inputs") does the same thing, so a later TU replays what it did instead of
// evaluating it again. Recorded per header: the inputs (each macro read
// before the header wrote it, with the definition seen; the #pragma once
// state of each file it enters; builtin answers; the include depth when it
// reads __INCLUDE_LEVEL__) and its own effects in order (defines, undefs,
// includes, __has_include questions, #pragma once, module lines). Nested
// headers are effects (they are entered again on replay, from the cache or
// evaluated), and their inputs are the including header's inputs too.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "preprocessor/macro_table.h"
#include "preprocessor/name_sequence_table.h"
#include "preprocessor/result.h"

namespace lexpack::preprocessor {

// The #pragma once state of a file: not seen, seen for certain, seen only in
// a branch taken as a fallback.
enum class OnceState : uint8_t { kNone, kCertain, kUncertain };

struct HeaderInputs {
  // Each macro read before the header wrote it; null: not defined. The name
  // is the definition's own, or stable_macro_name's when not defined: a
  // scan records hundreds of thousands of inputs, most names longer than a
  // string's inline buffer.
  std::vector<std::pair<std::string_view, std::shared_ptr<const Macro>>> macros;
  // macro_name_hash of each of `macros`' names, in the same order: a replay
  // looks them up and notes them read without hashing a name again.
  std::vector<size_t> macro_hashes;
  std::vector<std::pair<uint32_t, OnceState>> once;  // by file number (HeaderCache::intern)
  struct Query {
    std::string op, argument;
    std::optional<intmax_t> answer;
  };
  std::vector<Query> queries;
  bool reads_depth = false;    // __INCLUDE_LEVEL__: `depth` must match
  uint32_t depth = 0;          // of the header's entry
  uint32_t max_rel_depth = 0;  // deepest nested entry, counted from the header
};

struct HeaderTrace;

// One effect of the header's own directives, replayed in order.
struct HeaderOp {
  enum class Kind : uint8_t { kDefine, kUndef, kInclude, kHasInclude, kPragmaOnce, kModule };
  Kind kind = Kind::kDefine;
  std::shared_ptr<const Macro> macro;  // kDefine
  std::string name;                    // kUndef; kInclude/kHasInclude: the header name
  bool angled = false;
  bool next = false;
  bool computed = false;
  EntryKind how = EntryKind::kInclude;  // kInclude
  uint32_t line = 0;
  uint32_t answer = 0;  // kInclude/kHasInclude: the answer's file number (0: none)
  ModuleLine module;    // kModule
  // kInclude: the included header's own trace when it had one. Replaying
  // the includer replays it without checking its inputs again (they are
  // among the includer's); its include answers are checked with the
  // includer's, before anything is replayed.
  std::shared_ptr<const HeaderTrace> nested;
};

struct HeaderTrace {
  HeaderInputs inputs;
  std::vector<HeaderOp> ops;
  // The include and __has_include answers a replay asks, in the order it
  // asks them: each op's, then those of the nested trace it enters (see
  // count_answers).
  size_t answer_count = 0;
  // HeaderCache::carries() when last added or replayed (HeaderCache::used).
  mutable std::atomic<uint32_t> last_used{0};
};

// The answers a replay of `trace` asks: one per include or __has_include op,
// plus those of the nested trace of each include that found a file.
size_t count_answers(const HeaderTrace& trace);

// Thread-safe; one per scan. A key names the header (Host::file_key) and
// the context: the host's resolution context and the preprocessor's options.
// Both are numbered once per TU (intern), so that looking a header up and
// comparing answers compares numbers, not paths.
class HeaderCache {
 public:
  static constexpr size_t kMaxVariants = 24;  // traces kept per key
  // keep_only() drops a trace not used since this many calls before.
  static constexpr uint32_t kUnusedCarries = 16;

  // The same number for the same string in every TU of the scan; 0 for "".
  uint32_t intern(std::string_view key);
  static uint64_t key(uint32_t context, uint32_t file) { return uint64_t(context) << 32 | file; }

  std::vector<std::shared_ptr<const HeaderTrace>> find(uint64_t key) const;
  // A key's list full, the trace used least recently gives its place (none
  // used since the last keep_only() does).
  void add(uint64_t key, std::shared_ptr<const HeaderTrace> trace);
  // Notes that a trace found was replayed.
  void used(const HeaderTrace& trace) const { trace.last_used.store(carries_.load()); }

  // Keeps the traces each of whose files `keep` accepts, by the file's
  // key (the string intern() numbered): the header's own and, through
  // every nested trace it replays, those of the headers it enters; and of
  // those, the ones used in the last kUnusedCarries calls. Numbers stay as
  // they were. Not to be called while the cache is in use.
  void keep_only(const std::function<bool(std::string_view file_key)>& keep);
  size_t trace_count() const;
  uint32_t carries() const { return carries_.load(); }  // keep_only() calls so far

 private:
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, std::vector<std::shared_ptr<const HeaderTrace>>> traces_;
  std::atomic<uint32_t> carries_{0};
  struct ViewHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::mutex names_mu_;
  std::unordered_map<std::string, uint32_t, ViewHash, std::equal_to<>> names_;
};

// Same definition: one object, or equal name, parameters and body.
bool same_macro(const Macro* a, const Macro* b);

// Collects the inputs of every header being recorded (a stack: a header
// recorded inside another is recorded into both).
class TraceRecorder : public MacroObserver {
 public:
  bool active() const { return !stack_.empty(); }
  // Starts recording a header entered at `depth`.
  void begin(uint32_t depth);
  // The innermost header's trace, for its own effects.
  HeaderTrace* top() { return stack_.back().trace.get(); }
  // Ends the innermost recording and returns its trace, or null when it
  // cannot be shared (see spoil).
  std::shared_ptr<HeaderTrace> end();
  // Every header being recorded read something a trace cannot hold.
  void spoil();

  void looked_up(MacroName name, const std::shared_ptr<const Macro>* found) override;
  // The same for a read a replayed header made, whose name (a recorded
  // input's) is already kept for the whole process.
  void replayed_read(MacroName kept_name, const std::shared_ptr<const Macro>* found);
  void wrote(MacroName name) override;
  void once_read(uint32_t file, OnceState state);  // by HeaderCache::intern
  void once_wrote(uint32_t file);
  void query(std::string_view op, std::string_view argument, std::optional<intmax_t> answer);
  void read_depth();
  // A header entered (or replayed, with its own deepest entry) at `depth`.
  void entered(uint32_t depth);

 private:
  struct Active {
    uint64_t start = 0;
    std::shared_ptr<HeaderTrace> trace;
    bool spoiled = false;
  };
  // Notes a read of the name or file key whose numbers are `s`: an input of every
  // recording, innermost first, that started after its last write and has
  // not read it yet. The recordings that have read a name are always a
  // run of the stack ending at the innermost one that did (a later read
  // adds the ones pushed since), so one number per name tells which.
  template <typename Add>
  void read(NameSequenceTable::Seqs& s, const Add& add);
  void macro_read(MacroName name, const std::shared_ptr<const Macro>* found, bool name_kept);

  std::vector<Active> stack_;
  uint64_t seq_ = 0;
  NameSequenceTable macro_seqs_;  // by macro name
  NameSequenceTable once_seqs_;   // by file number
};

}  // namespace lexpack::preprocessor
