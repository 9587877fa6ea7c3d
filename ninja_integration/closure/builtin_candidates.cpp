// The builtin questions written in a file's #if and #elif lines (see
// builtin_candidates.h).
#include "ninja_integration/closure/builtin_candidates.h"

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

// Where `lower` (lower-case) starts in `word`, whatever its case.
size_t lowered_find(std::string_view word, std::string_view lower) {
  for (size_t at = 0; at + lower.size() <= word.size(); ++at) {
    size_t k = 0;
    while (k < lower.size()) {
      char c = word[at + k];
      if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
      if (c != lower[k]) break;
      ++k;
    }
    if (k == lower.size()) return at;
  }
  return std::string_view::npos;
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
      // A standard's number after "cpp" (FMT_HAS_CPP17_ATTRIBUTE) asks the
      // same query, for that standard on.
      std::string unversioned;
      if (const size_t cpp = lowered_find(word, "_cpp");
          cpp != std::string_view::npos && cpp + 4 < word.size() && is_digit(word[cpp + 4])) {
        size_t digits = cpp + 4;
        while (digits < word.size() && is_digit(word[digits])) ++digits;
        unversioned = std::string(word.substr(0, cpp + 4)) + std::string(word.substr(digits));
        word = unversioned;
      }
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
