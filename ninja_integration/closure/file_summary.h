// The include-like directives of one file, in source order, with its content
// hash: what the lexer's answer is reduced to, and how it is kept in the store.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cache/hash.h"
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
  bool operator==(const FileSummary&) const = default;
};

// Stable encoding of a summary for the store (starts with a format tag).
std::string encode_summary(const FileSummary& summary);
bool decode_summary(std::string_view bytes, FileSummary* summary);

// The summary of a scan result.
FileSummary summarize(const lexer::ScanResult& scan, const cache::Hash128& content);

}  // namespace lexpack::closure
