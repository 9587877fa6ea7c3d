// The preprocessor over the lexer's directive stream: it evaluates #if /
// #elif / #ifdef with a real macro table, expands computed includes and
// follows includes through a Host, so a scan lists the files the compiler
// reads and no more. What it cannot know makes it take every branch (never
// fewer files than the compiler) and say why in Result::inexact.
//
// Use, for one translation unit, in the compiler's order:
//   Preprocessor pp(host, Options::for_predefined(dM_text));
//   pp.predefine(dM_text, &err);             // `g++ -dM -E -x c++ /dev/null` output
//   pp.define("NAME=VALUE", &err);           // each -D, and
//   pp.undefine("NAME");                     // each -U, in command order
//   pp.run_file(imacros_handle, EntryKind::kImacros);  // each -imacros
//   pp.run_file(forced_handle, EntryKind::kForced);    // each -include
//   pp.run_file(main_handle, EntryKind::kMain);
//   const Result& r = pp.result();
// Handles for the command's files come from the caller's own resolution.
// Dependencies for GCC are r.unique_files(); clang's -M also lists every
// file a __has_include found (r.has_includes with an answer).
//
// Cost: each directive of each entered file is visited once per entry; a
// file whose guard macro is defined, or that has #pragma once / #import, is
// not re-entered. A header's evaluation depends only on the macro state on
// entry, restricted to the names its conditions and computed includes read:
// with use_header_cache, translation units of one scan share each header's
// evaluation per such state (header_cache.h) and replay it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "preprocessor/header_cache.h"
#include "preprocessor/hide_set.h"
#include "preprocessor/host.h"
#include "preprocessor/macro_expander.h"
#include "preprocessor/macro_table.h"
#include "preprocessor/result.h"

namespace lexpack::preprocessor {

struct Options {
  // Names the compiler defines itself (never printed by -dM -E): what
  // `defined(NAME)` answers and which operators a condition may call.
  std::unordered_map<std::string, BuiltinKind> builtins;
  uint32_t max_include_depth = 200;  // GCC's limit
  // Whether Result's include and __has_include questions keep the names
  // asked (a computed include's always): off for a caller that reads only
  // their answers, spared a string per question (thousands in a TU).
  bool keep_question_names = true;

  // The language decides which query operators there are.
  enum class Dialect { kC, kCxx, kAssembly };
  static Options gcc(Dialect dialect = Dialect::kCxx);    // measured with GCC 12
  static Options clang(Dialect dialect = Dialect::kCxx);  // measured with clang 14
  // clang() when the predefined macros define __clang__, else gcc(), for the
  // dialect they tell (__cplusplus, __ASSEMBLER__, else C).
  static Options for_predefined(std::string_view predefined_text);
};

class Preprocessor {
 public:
  Preprocessor(Host& host, Options options);
  ~Preprocessor();
  Preprocessor(const Preprocessor&) = delete;
  Preprocessor& operator=(const Preprocessor&) = delete;

  // `#define` lines of `-dM -E` output. false with *err on a line that does
  // not parse (the others still apply).
  bool predefine(std::string_view text, std::string* err);
  // The same, parsed already (parse_predefined).
  void predefine(const std::vector<std::shared_ptr<const Macro>>& macros);
  // One -D argument ("NAME", "NAME=VALUE", "NAME(a,b)=VALUE").
  bool define(std::string_view arg, std::string* err);
  // One -U argument.
  void undefine(std::string_view name);

  // Processes a file as the compiler does for `how` (kMain, kForced or
  // kImacros; -imacros keeps only the macros, which for a scan is the same).
  void run_file(FileHandle file, EntryKind how);

  // Shares header evaluations with the other translation units of a scan
  // through `cache` (used from then on; needs Host::file_key). `context`
  // names what the host's resolve() answers depend on besides the question
  // and the includer: its search list and working directory.
  void use_header_cache(HeaderCache* cache, std::string_view context);
  // Headers replayed from the cache and headers evaluated while it was on.
  size_t headers_replayed() const { return replayed_; }
  size_t headers_evaluated() const { return evaluated_; }

  const Result& result() const { return result_; }
  Result take_result() { return std::move(result_); }
  const MacroTable& macros() const { return table_; }
  // Every macro name the evaluation looked up so far, replayed headers'
  // reads included: a name outside it had no say in what was evaluated.
  const MacroReads& macro_reads() const { return reads_; }

 private:
  class Run;
  friend class Run;

  struct Once {
    bool certain = false;
  };

  // #pragma once or #import of a file seen (in a fallback branch or not).
  void set_once(FileHandle file);
  OnceState once_state(FileHandle file) const;
  // The cache's number for the file's Host::file_key; 0: the host cannot
  // name it.
  uint32_t id_of(FileHandle file);
  // True when `trace` applies to `file` entered now at `depth`: its inputs
  // hold and its includes and __has_include questions, and those of the
  // nested traces it replays, find the same files (their answers, in the
  // order a replay asks them, in *answers).
  bool applies(const HeaderTrace& trace, FileHandle file, uint32_t depth,
               std::vector<std::optional<FileHandle>>* answers);
  bool same_answers(const HeaderTrace& trace, FileHandle file,
                    std::vector<std::optional<FileHandle>>* answers);
  // Tells the recordings of enclosing headers what a replayed header read.
  void note_replayed(const HeaderTrace& trace, uint32_t depth);

  Host& host_;
  Options options_;
  MacroTable table_;
  MacroReads reads_;
  HideSets hide_sets_;
  Result result_;
  std::unordered_map<FileHandle, Once> once_;  // #pragma once / #import seen
  int fallback_depth_ = 0;                     // > 0: inside a branch taken as a fallback
  HeaderCache* cache_ = nullptr;
  uint32_t cache_context_ = 0;  // the cache's number for the options and context
  TraceRecorder recorder_;
  std::unordered_map<uint32_t, OnceState> once_by_id_;  // once_ by id_of
  std::vector<uint32_t> ids_;                           // id_of by handle, kNotAsked
  static constexpr uint32_t kNotAsked = ~uint32_t(0);
  size_t replayed_ = 0;
  size_t evaluated_ = 0;
};

}  // namespace lexpack::preprocessor
