// What the directive scanner reports about one file: the directives that
// matter to dependency tracking and caching, in source order, plus flags.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lexpack::lexer {

enum class DirectiveKind : uint8_t {
  kInclude,         // #include <h> / "h" / MACRO
  kIncludeNext,     // #include_next
  kImport,          // #import (Objective-C / GCC extension)
  kHasInclude,      // __has_include(...) in #if/#elif/#define
  kHasIncludeNext,  // __has_include_next(...)
  kDefine,          // text = macro name; body_offset/body_size = replacement list
  kUndef,           // text = macro name
  kIf,              // text = condition
  kIfdef,           // text = macro name
  kIfndef,
  kElif,
  kElifdef,
  kElifndef,
  kElse,
  kEndif,
  kPragmaOnce,    // #pragma once or _Pragma("once")
  kModuleDecl,    // module; / [export] module name[:part]; text = name ("" for `module;`)
  kModuleImport,  // [export] import name; import :part; import <h>; import "h";
};

// Stable lower-case name ("include", "include_next", "has_include", ...).
std::string_view kind_name(DirectiveKind kind);

struct Directive {
  DirectiveKind kind{};
  bool angled = false;       // include-like: written as <header>
  bool computed = false;     // include-like: a macro expansion; text holds the tokens
  bool exported = false;     // module declarations and imports: `export` given
  bool header_unit = false;  // kModuleImport: `import <h>;` or `import "h";`
  uint32_t line = 0;         // 1-based line of the directive's first byte
  uint64_t offset = 0;       // byte offset of the directive's first byte ('#' or keyword)
  // Header name, macro name, condition or module name: ScanResult::text(d).
  uint32_t text_offset = 0;
  uint32_t text_size = 0;
  uint64_t body_offset = 0;  // kDefine: replacement list span in the input bytes
  uint64_t body_size = 0;

  bool operator==(const Directive&) const = default;
};

// A malformed or unbalanced construct. Scanning always goes on.
struct Diagnostic {
  uint32_t line = 0;
  uint64_t offset = 0;
  std::string message;

  bool operator==(const Diagnostic&) const = default;
};

struct ScanResult {
  std::vector<Directive> directives;
  std::string text_pool;  // every directive's text, back to back
  std::vector<Diagnostic> diagnostics;
  std::string include_guard;    // the guard macro; empty when the file has no guard
  bool uses_date = false;       // __DATE__ outside comments and literals
  bool uses_time = false;       // __TIME__
  bool uses_timestamp = false;  // __TIMESTAMP__

  std::string_view text(const Directive& d) const {
    return std::string_view(text_pool).substr(d.text_offset, d.text_size);
  }

  bool operator==(const ScanResult&) const = default;
};

}  // namespace lexpack::lexer
