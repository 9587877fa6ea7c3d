// What the preprocessor asks of its caller: include resolution (the
// compiler's search, done by the caller's include-path model), file contents
// with their directive scans, and compiler answers it cannot compute. Tests
// implement it over an in-memory file map.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lexer/scan_result.h"

namespace lexpack::preprocessor {

struct ParsedDefines;

// The caller's name for one file. Equal handles are the same file (what
// #pragma once and #import compare), so give one file one handle.
using FileHandle = uint32_t;

struct FileContent {
  std::string_view bytes;                   // the file's bytes
  const lexer::ScanResult* scan = nullptr;  // lexer::scan of exactly those bytes
  std::string_view display_name;            // for reasons, e.g. "include/f.h"
  // Optional: ParsedDefines(bytes, *scan), kept by a caller that shares
  // files across translation units (each definition is then parsed once).
  const ParsedDefines* defines = nullptr;
};

class Host {
 public:
  virtual ~Host() = default;

  // The file the compiler opens for `#include <name>` (angled) or
  // `#include "name"` written in `includer`; is_next: #include_next or
  // __has_include_next, searching the directories after the one `includer`
  // was found in. nullopt: not found. __has_include asks the same question.
  virtual std::optional<FileHandle> resolve(std::string_view name, bool angled, bool is_next,
                                            FileHandle includer) = 0;

  // The bytes and scan of a handle resolve() or the caller gave; nullopt
  // when it cannot be read. Both must stay valid until the Preprocessor is
  // destroyed (the caller may cache scans across translation units).
  virtual std::optional<FileContent> content(FileHandle file) = 0;

  // Optional: a name of the file that is the same in every translation
  // unit of a scan exactly when the file, its bytes and where it was found
  // (what its own includes are resolved from) are the same; "" when the
  // host cannot tell, and then nothing about the file is shared.
  virtual std::string file_key(FileHandle file) {
    (void)file;
    return {};
  }

  // Optional: the compiler's answer to a query builtin such as
  // __has_builtin(__builtin_expect) (op "__has_builtin", argument
  // "__builtin_expect", spelled with single spaces). nullopt: unknown, so the
  // conditional falls back to taking every branch.
  virtual std::optional<intmax_t> builtin_query(std::string_view op, std::string_view argument) {
    (void)op;
    (void)argument;
    return std::nullopt;
  }
};

}  // namespace lexpack::preprocessor
