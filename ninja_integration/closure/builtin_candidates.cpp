// The builtin questions written in a file's #if and #elif lines (see
// builtin_candidates.h).
#include "ninja_integration/closure/builtin_candidates.h"

#include <string_view>

namespace lexpack::closure {
namespace {

bool identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
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
      const std::string_view word = text.substr(at, i - at);
      at = i;
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
      size_t end = i;
      while (i < text.size() && text[i] == ' ') ++i;
      if (end == start || i >= text.size() || text[i] != ')') continue;
      out->emplace(std::string(op), std::string(text.substr(start, end - start)));
    }
  }
}

}  // namespace lexpack::closure
