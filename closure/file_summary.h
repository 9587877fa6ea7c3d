// The include-like directives of one file, in source order, with its content
// hash: what the lexer's answer is reduced to, and how it is kept in the store.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/hash/hash.h"
#include "lexer/scan_result.h"

namespace lexpack::closure {

// The include-like directives of one file, in source order.
struct IncludeDirective {
  lexer::DirectiveKind kind{};  // kInclude, kIncludeNext, kImport, kHasInclude, kHasIncludeNext
  bool angled = false;
  bool computed = false;
  std::string name;
  bool operator==(const IncludeDirective&) const = default;
};

struct FileSummary {
  cache::Hash128 content;
  std::vector<IncludeDirective> includes;
  bool uses_date = false;
  bool uses_time = false;  // __TIME__ or __TIMESTAMP__
  // The bytes name an assembler directive that reads a file (gas's .include
  // or .incbin), as inline asm or assembly source may: see
  // names_assembler_file_read().
  bool assembler_reads = false;
  bool pragma_once = false;  // #pragma once or _Pragma("once")
  // An #include names an absolute path (names_absolute_include(); not
  // encoded: made again from `includes` when decoded).
  bool absolute_include = false;
  // What preprocessing reads of the file (preprocessing_fingerprint()): two
  // versions with the same one give the same closure in the same context.
  cache::Hash128 preprocessing;
  bool operator==(const FileSummary&) const = default;
};

// Whether a summary's directives name an absolute path (what makes a file a
// candidate for relocated_content), from its includes.
bool names_absolute_include(const FileSummary& summary);

// Stable encoding of a summary for the store (starts with a format tag).
std::string encode_summary(const FileSummary& summary);
bool decode_summary(std::string_view bytes, FileSummary* summary);

// The summary of a scan result; `bytes` are the scanned file's.
FileSummary summarize(const lexer::ScanResult& scan, const cache::Hash128& content,
                      std::string_view bytes);

// Everything the walk and the exact evaluation read of a file: each
// directive the lexer reports (kind, line, text, and a #define's whole
// span), its diagnostics, include guard and flags (__DATE__, __TIME__,
// __TIMESTAMP__, an assembler file read). An edit that leaves it unchanged
// (the code of a function, a comment outside directives) changes the
// file's content but not what the preprocessor makes of its directives.
cache::Hash128 preprocessing_fingerprint(const lexer::ScanResult& scan, std::string_view bytes,
                                         bool assembler_reads);

// Whether `bytes` hold `.include` or `.incbin` (in any case, as gas reads
// them) as a whole directive name, anywhere: in a string literal of inline
// asm (`asm(".incbin \"f\"")`, `".incbin" " \"f\""`), in assembly, in a
// macro or a comment alike. The assembler reads that file; the preprocessor,
// the depfile and so the closure never see it. Conservative: whatever may
// lead to a file name counts (a string, a macro name, an escape, a line
// end); `x.includes` (gas names go on with letters, digits, `_`, `.` and
// `$`) and `x.include(...)`, `s.include = 1` (punctuation next) do not.
bool names_assembler_file_read(std::string_view bytes);

// preprocessing_fingerprint() without what cannot change an evaluation that
// read none of the macros it defines: the #define and #undef lines of names
// `reads` (a preprocessor::MacroReads filter's bytes; nullopt: the
// evaluation read no macro) may not hold, and every directive's line unless __LINE__
// may be among them. A #define whose replacement names __has_include
// always counts. Two versions of a TU's source with the same one, in the
// same context, give the same closure (the walk follows every #include
// whatever the macros; the evaluation reads only names in `reads`).
cache::Hash128 inert_fingerprint(const lexer::ScanResult& scan, std::string_view bytes,
                                 bool assembler_reads, std::optional<std::string_view> reads);

}  // namespace lexpack::closure
