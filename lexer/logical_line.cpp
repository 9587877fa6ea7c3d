// Builds the logical line of a directive or module declaration: splices
// removed, comments replaced by one space, literals and header names kept
// verbatim. Most directive lines contain no '\\' or '/', and are used in place.
#include "lexer/chars.h"
#include "lexer/scanner_internal.h"

namespace lexpack::lexer {
namespace {

bool ends_with_word(std::string_view v, std::string_view word) {
  if (v.size() < word.size() || v.substr(v.size() - word.size()) != word) return false;
  return v.size() == word.size() || !is_ident_char(v[v.size() - word.size() - 1]);
}

std::string_view trim(std::string_view v) {
  while (!v.empty() && is_hspace(v.front())) v.remove_prefix(1);
  while (!v.empty() && is_hspace(v.back())) v.remove_suffix(1);
  return v;
}

// True when the cleaned text ends inside a pp-number, so a following '\''
// is a digit separator.
bool ends_in_pp_number(std::string_view v) {
  size_t i = v.size();
  while (i > 0 && (is_ident_char(v[i - 1]) || v[i - 1] == '.')) --i;
  if (i == v.size()) return false;
  return is_digit(v[i]) || (v[i] == '.' && i + 1 < v.size() && is_digit(v[i + 1]));
}

}  // namespace

void Scanner::put(char c, const char* from) {
  line_.storage_.push_back(c);
  line_.map_.push_back(static_cast<uint32_t>(from - line_.base_));
}

bool Scanner::header_name_allowed(LineMode mode) const {
  std::string_view v = trim(line_.storage_);
  if (mode == LineMode::kDirective && (v == "include" || v == "include_next" || v == "import"))
    return true;
  if (mode == LineMode::kModule && ends_with_word(v, "import")) return true;
  if (v.empty() || v.back() != '(') return false;
  v.remove_suffix(1);
  v = trim(v);
  return ends_with_word(v, "__has_include") || ends_with_word(v, "__has_include_next");
}

const char* Scanner::clean_header_name(const char* p, char close) {
  put(*p, p);
  const char* q = p + 1;
  while (q < end_) {
    const char* after;
    if (*q == '\\' && is_splice(q, end_, &after)) {
      q = after;
      continue;
    }
    if (is_newline(*q)) return q;
    put(*q, q);
    if (*q++ == close) return q;
  }
  return q;
}

const char* Scanner::clean_literal(const char* p, char quote) {
  put(*p, p);
  const char* q = p + 1;
  while (q < end_) {
    const char* after;
    if (*q == '\\') {
      if (is_splice(q, end_, &after)) {
        q = after;
        continue;
      }
      put(*q, q);
      ++q;
      if (q < end_ && !is_newline(*q)) {
        put(*q, q);
        ++q;
      }
      continue;
    }
    if (is_newline(*q)) return q;  // unterminated: ends at the line end
    put(*q, q);
    if (*q++ == quote) return q;
  }
  return q;
}

void Scanner::read_line(const char* p, LineMode mode) {
  line_.base_ = p;
  line_.storage_.clear();
  line_.map_.clear();
  static constexpr char kSpecial[4] = {'\n', '\r', '\\', '/'};
  const char* e = kernel_.find_any4(p, end_, kSpecial);
  if (e == end_ || is_newline(*e)) {
    line_.mapped_ = false;
    line_.view_ = std::string_view(p, e - p);
    line_.end_ = e;
    return;
  }
  line_.mapped_ = true;
  bool name_known = mode != LineMode::kDirective;
  bool raw = false;  // #error and #warning bodies are raw text
  const char* q = p;
  while (q < end_) {
    const char c = *q;
    const char* after;
    if (c == '\\' && is_splice(q, end_, &after)) {
      q = after;
      continue;
    }
    if (is_newline(c)) break;
    if (!name_known && !is_ident_char(c)) {
      std::string_view v = trim(line_.storage_);
      if (!v.empty() || !is_hspace(c)) {
        name_known = !v.empty() || c != '/';
        raw = v == "error" || v == "warning";
      }
    }
    if (raw) {
      put(c, q);
      ++q;
      continue;
    }
    if (c == '/') {
      const char* n = skip_splices(q + 1, end_);
      if (n < end_ && *n == '*') {
        put(' ', q);
        q = skip_block_comment(n + 1);
        continue;
      }
      if (n < end_ && *n == '/') {
        q = skip_line_comment(n + 1);
        break;
      }
    } else if (c == '"') {
      q = clean_literal(q, '"');
      continue;
    } else if (c == '\'' && !ends_in_pp_number(line_.storage_)) {
      q = clean_literal(q, '\'');
      continue;
    } else if (c == '<' && header_name_allowed(mode)) {
      q = clean_header_name(q, '>');
      continue;
    }
    put(c, q);
    ++q;
  }
  line_.view_ = line_.storage_;
  line_.end_ = q;
}

}  // namespace lexpack::lexer
