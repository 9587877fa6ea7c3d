// The builtin questions written in a file's #if and #elif lines (see
// builtin_candidates.h).
#include "closure/builtin_candidates.h"

#include <string>
#include <string_view>

namespace lexpack::closure {
namespace {

bool identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// A library's own name for a query, lower-cased and in the standard form:
// "have" for "has" (GTEST_HAVE_ATTRIBUTE_, ABSL_HAVE_BUILTIN), no trailing
// '_', no standard's number after "cpp" (FMT_HAS_CPP17_ATTRIBUTE asks the
// same query, for that standard on).
std::string query_name(std::string_view word) {
  std::string out(word);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  }
  while (out.size() > 1 && out.back() == '_') out.pop_back();
  if (size_t have = out.find("_have_"); have != std::string::npos) out.replace(have, 6, "_has_");
  if (out.rfind("have_", 0) == 0) out.replace(0, 5, "has_");
  if (size_t cpp = out.find("_cpp"); cpp != std::string::npos) {
    size_t digits = cpp + 4;
    while (digits < out.size() && is_digit(out[digits])) ++digits;
    out.erase(cpp + 4, digits - (cpp + 4));
  }
  return out;
}

}  // namespace

void note_candidates(const lexer::ScanResult& scan,
                     std::set<std::pair<std::string, std::string>>* out) {
  static constexpr std::string_view kOps[] = {"__has_builtin", "__has_attribute",
                                              "__has_cpp_attribute", "__has_feature",
                                              "__has_extension"};
  auto ends_as = [](std::string_view word, std::string_view op) {
    // op without its first '_', after a '_' of the word or as the whole word.
    const std::string_view tail = op.substr(1);
    if (word.size() < tail.size()) return false;
    for (size_t k = 0; k < tail.size(); ++k) {
      char c = word[word.size() - tail.size() + k];
      if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
      if (c != tail[k]) return false;
    }
    return true;
  };
  for (const lexer::Directive& d : scan.directives) {
    if (d.kind != lexer::DirectiveKind::kIf && d.kind != lexer::DirectiveKind::kElif) continue;
    std::string_view text = scan.text(d);
    for (size_t at = 0; at < text.size();) {
      if (!identifier_char(text[at])) {
        ++at;
        continue;
      }
      size_t i = at;
      while (i < text.size() && identifier_char(text[i])) ++i;
      std::string_view word = text.substr(at, i - at);
      at = i;
      // Every query's name ends in 'e' or 'n' (attribute, feature; builtin,
      // extension), whatever follows of '_': most words are no query.
      size_t last = word.size();
      while (last > 1 && word[last - 1] == '_') --last;
      const char final_char = char(word[last - 1] | 0x20);
      if (final_char != 'e' && final_char != 'n') continue;
      const std::string normal = query_name(word);
      word = normal;
      std::string_view op;
      for (std::string_view o : kOps) {
        if (ends_as(word, o)) op = o;  // no name ends as two of them
      }
      if (op.empty()) continue;
      while (i < text.size() && text[i] == ' ') ++i;
      if (i >= text.size() || text[i] != '(') continue;
      ++i;
      while (i < text.size() && text[i] == ' ') ++i;
      size_t start = i;
      while (i < text.size() && identifier_char(text[i])) ++i;
      // A scoped attribute: clang::lifetimebound, gnu::always_inline.
      while (i > start && i + 2 < text.size() && text[i] == ':' && text[i + 1] == ':' &&
             identifier_char(text[i + 2])) {
        i += 2;
        while (i < text.size() && identifier_char(text[i])) ++i;
      }
      size_t end = i;
      while (i < text.size() && text[i] == ' ') ++i;
      if (end == start || i >= text.size() || text[i] != ')') continue;
      out->emplace(std::string(op), std::string(text.substr(start, end - start)));
    }
  }
}

}  // namespace lexpack::closure
