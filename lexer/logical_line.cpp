// Builds the logical line of a directive or module declaration: splices
// removed, comments replaced by one space, literals and header names kept
// verbatim. Most directive lines contain no comment or splice and are used in
// place; the others are copied in runs.
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

// Bytes that end a plain run inside a directive line.
struct SpecialBytes {
  bool table[256] = {};
  constexpr SpecialBytes() {
    for (unsigned char c : {'\\', '/', '"', '\'', '<', '\n', '\r'}) table[c] = true;
  }
};
constexpr SpecialBytes kSpecial;

}  // namespace

void Scanner::put(const char* from, size_t n) {
  const uint32_t offset = static_cast<uint32_t>(from - line_.base_);
  const uint32_t index = static_cast<uint32_t>(line_.storage_.size());
  if (line_.runs_.empty() ||
      line_.runs_.back().offset + (index - line_.runs_.back().text_index) != offset) {
    line_.runs_.push_back({index, offset});
  }
  line_.storage_.append(from, n);
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
  put(p, 1);
  const char* q = p + 1;
  while (q < end_) {
    const char* after;
    if (*q == '\\' && is_splice(q, end_, &after)) {
      q = after;
      continue;
    }
    if (is_newline(*q)) return q;
    put(q, 1);
    if (*q++ == close) return q;
  }
  return q;
}

const char* Scanner::clean_literal(const char* p, char quote) {
  put(p, 1);
  const char* q = p + 1;
  while (q < end_) {
    const char* after;
    if (*q == '\\') {
      if (is_splice(q, end_, &after)) {
        q = after;
        continue;
      }
      const size_t n = (q + 1 < end_ && !is_newline(q[1])) ? 2 : 1;
      put(q, n);
      q += n;
      continue;
    }
    if (is_newline(*q)) return q;  // unterminated: ends at the line end
    put(q, 1);
    if (*q++ == quote) return q;
  }
  return q;
}

void Scanner::read_line(const char* p, LineMode mode) {
  line_.base_ = p;
  // Fast path: no comment and no splice before the line end, so the raw bytes
  // are the logical line. A '/' or '\\' that starts neither is plain text.
  static constexpr char kMaybeSpecial[4] = {'\n', '\r', '\\', '/'};
  const char* q = p;
  for (;;) {
    const char* e = kernel_.find_any4(q, end_, kMaybeSpecial);
    if (e == end_ || is_newline(*e)) {
      line_.mapped_ = false;
      line_.view_ = std::string_view(p, e - p);
      line_.end_ = e;
      return;
    }
    const char* after;
    if (*e == '\\' ? is_splice(e, end_, &after)
                   : (e + 1 < end_ && (e[1] == '*' || e[1] == '/' || e[1] == '\\'))) {
      break;
    }
    q = e + 1;
  }

  line_.mapped_ = true;
  line_.storage_.clear();
  line_.runs_.clear();
  bool name_known = mode != LineMode::kDirective;
  bool raw = false;  // #error and #warning bodies are raw text
  q = p;
  while (q < end_) {
    // Copy the plain run up to the next byte that may matter.
    const char* r = q;
    // As a number: the test below ors eight of them without branching.
    auto special = [](const char* c) {
      return unsigned(kSpecial.table[static_cast<unsigned char>(*c)]);
    };
    // Macro bodies run long between special bytes: test eight at a time.
    while (end_ - r >= 8 && !(special(r) | special(r + 1) | special(r + 2) | special(r + 3) |
                              special(r + 4) | special(r + 5) | special(r + 6) | special(r + 7)))
      r += 8;
    while (r < end_ && !special(r)) ++r;
    if (r > q) {
      put(q, r - q);
      q = r;
    }
    if (q == end_) break;
    const char c = *q;
    const char* after;
    if (c == '\\' && is_splice(q, end_, &after)) {
      q = after;
      continue;
    }
    if (is_newline(c)) break;
    if (!name_known) {
      // The name is complete once something other than a splice follows it.
      const std::string_view v = trim(line_.storage_);
      if (!v.empty() || c != '/') {
        name_known = true;
        size_t n = 0;
        while (n < v.size() && is_ident_char(v[n])) ++n;
        raw = v.substr(0, n) == "error" || v.substr(0, n) == "warning";
      }
    }
    if (raw) {
      put(q, 1);
      ++q;
      continue;
    }
    if (c == '/') {
      const char* n = skip_splices(q + 1, end_);
      if (n < end_ && *n == '*') {
        // The comment becomes one space, mapped to its '/'.
        line_.runs_.push_back(
            {static_cast<uint32_t>(line_.storage_.size()), static_cast<uint32_t>(q - p)});
        line_.storage_.push_back(' ');
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
    put(q, 1);
    ++q;
  }
  line_.view_ = line_.storage_;
  line_.end_ = q;
}

}  // namespace lexpack::lexer
