// What running the preprocessor over one translation unit found: the files
// it entered, every include and __has_include question with its answer,
// module lines in taken branches, and whether all of it is exact.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "preprocessor/host.h"

namespace lexpack::preprocessor {

enum class EntryKind : uint8_t {
  kMain,         // the source file
  kForced,       // -include
  kImacros,      // -imacros
  kInclude,      // #include
  kIncludeNext,  // #include_next
  kImport,       // #import
};

struct FileEntry {
  FileHandle file = 0;
  EntryKind how = EntryKind::kMain;
  std::optional<FileHandle> includer;  // none for kMain, kForced, kImacros
  uint32_t line = 0;                   // of the directive in includer
  bool processed = true;  // false: skipped (guard macro defined, #pragma once, #import seen)
  bool fallback = false;  // reached only through a branch taken as a fallback
};

// One include or __has_include question and its answer.
struct IncludeQuestion {
  std::string name;
  bool angled = false;
  bool next = false;      // #include_next / __has_include_next
  bool computed = false;  // the name came out of macro expansion
  FileHandle includer = 0;
  uint32_t line = 0;
  std::optional<FileHandle> answer;  // nullopt: not found
};

// `[export] module name;` or `[export] import name;` in a taken branch.
struct ModuleLine {
  FileHandle file = 0;
  uint32_t line = 0;
  bool declaration = false;  // module declaration (else an import)
  bool exported = false;
  bool header_unit = false;
  bool angled = false;
  bool fallback = false;  // in a branch taken as a fallback
  std::string name;
};

enum class Inexact : uint8_t {
  kUncertainCondition,  // a builtin the host did not answer, or a macro of a fallback branch
  kConditionError,      // a #if the compiler rejects (division by zero, bad syntax)
  kUnsupported,         // a macro construct this evaluator does not support
  kComputedInclude,     // a computed include it could not expand with certainty
  kMissingInclude,      // an include that resolves to nothing (the compile fails)
  kUnreadable,          // a file the host could not give
  kBadDirective,        // a #define the compiler rejects
  kDepthLimit,          // includes nested deeper than the compilers allow
};

struct InexactReason {
  Inexact kind{};
  std::string message;  // "f.h:12: unknown __has_builtin(__builtin_foo)"
};

struct Result {
  std::vector<FileEntry> files;               // every include that found a file, in order
  std::vector<IncludeQuestion> includes;      // every include directive reached, computed too
  std::vector<IncludeQuestion> has_includes;  // every __has_include(_next) asked
  std::vector<ModuleLine> modules;
  std::vector<InexactReason> inexact;  // empty: the evaluation is exact

  bool exact() const { return inexact.empty(); }
  // True when a computed include could not be expanded with certainty: only
  // the compiler (-M) can tell which files this translation unit reads.
  bool needs_compiler() const;
  // The first reason, or "" when exact.
  std::string reason() const;
  // Each entered file once, in order of first entry.
  std::vector<FileHandle> unique_files() const;
};

}  // namespace lexpack::preprocessor
