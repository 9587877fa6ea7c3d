// A small Make depfile reader, enough for what gcc and clang emit: targets,
// a colon, prerequisites separated by blanks, lines continued by backslash.
#include "base/depfile_reader.h"

namespace lexpack::base {

bool parse_depfile(std::string_view text, std::vector<std::string>* prerequisites,
                   std::string* err) {
  bool in_targets = true;
  std::string word;
  bool have_word = false;
  int line = 1;
  bool saw_target = false;
  auto flush = [&]() {
    if (!have_word) return;
    if (!in_targets) prerequisites->push_back(word);
    if (in_targets) saw_target = true;
    word.clear();
    have_word = false;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      char n = text[i + 1];
      if (n == '\n' || (n == '\r' && i + 2 < text.size() && text[i + 2] == '\n')) {
        flush();
        i += (n == '\r') ? 2 : 1;
        ++line;
        continue;
      }
      if (n == ' ' || n == '#' || n == '\\') {
        word.push_back(n);
        have_word = true;
        ++i;
        continue;
      }
      word.push_back(c);
      have_word = true;
      continue;
    }
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      word.push_back('$');
      have_word = true;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      flush();
      continue;
    }
    if (c == '\n') {
      flush();
      if (in_targets && saw_target) {
        *err = "line " + std::to_string(line) + ": expected ':' after the targets";
        return false;
      }
      in_targets = true;
      saw_target = false;
      ++line;
      continue;
    }
    if (c == ':' && in_targets &&
        (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\t' || text[i + 1] == '\n' ||
         text[i + 1] == '\r')) {
      flush();
      in_targets = false;
      continue;
    }
    word.push_back(c);
    have_word = true;
  }
  flush();
  if (in_targets && saw_target) {
    *err = "line " + std::to_string(line) + ": expected ':' after the targets";
    return false;
  }
  return true;
}

}  // namespace lexpack::base
