// Expansion of @file arguments, following libiberty's buildargv quoting:
// white space separates, '...' and "..." group, backslash escapes one byte.
#include "compiler/response_file.h"

#include <fstream>
#include <sstream>

namespace lexpack::compiler {

std::vector<std::string> split_response_text(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  bool in_arg = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == '\\' && i + 1 < text.size()) {
        cur.push_back(text[++i]);
      } else if (c == quote) {
        quote = 0;
      } else {
        cur.push_back(c);
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (in_arg) out.push_back(std::move(cur));
      cur.clear();
      in_arg = false;
      continue;
    }
    in_arg = true;
    if (c == '\\' && i + 1 < text.size()) {
      cur.push_back(text[++i]);
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else {
      cur.push_back(c);
    }
  }
  if (in_arg) out.push_back(std::move(cur));
  return out;
}

bool expand_response_files(std::vector<std::string>* args, std::string* err) {
  constexpr int kMaxExpansions = 64;
  int expansions = 0;
  for (size_t i = 0; i < args->size();) {
    const std::string& arg = (*args)[i];
    if (arg.size() < 2 || arg[0] != '@') {
      ++i;
      continue;
    }
    if (++expansions > kMaxExpansions) {
      *err = "too many nested response files at " + arg;
      return false;
    }
    std::string path = arg.substr(1);
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      *err = "cannot read response file " + path;
      return false;
    }
    std::ostringstream text;
    text << in.rdbuf();
    std::vector<std::string> inner = split_response_text(text.str());
    args->erase(args->begin() + i);
    args->insert(args->begin() + i, inner.begin(), inner.end());
  }
  return true;
}

}  // namespace lexpack::compiler
