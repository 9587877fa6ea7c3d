// Splits directive text into preprocessing tokens (C++ [lex.pptoken]): what
// the macro expander and the #if evaluator work on: every #define of each
// file a scan enters, and each condition evaluated.
#include <array>
#include <cstring>

#include "preprocessor/token.h"

namespace lexpack::preprocessor {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r' || c == '\n';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Punctuators of more than one byte, longest first.
constexpr std::array<std::string_view, 33> kPunctuators = {
    "%:%:", "...", "<<=", ">>=", "<=>", "->*", "##", "<<", ">>", "<=", ">=",
    "==",   "!=",  "&&",  "||",  "++",  "--",  "+=", "-=", "*=", "/=", "%=",
    "&=",   "|=",  "^=",  "->",  "::",  ".*",  "<:", ":>", "<%", "%>", "%:"};

constexpr std::string_view kSingles = "{}[]()#;:?.+-*/%^&|~!=<>,";

// The length of a string or character literal whose opening quote is at i,
// ending at the closing quote or at the end of the text.
size_t quoted_end(std::string_view v, size_t i) {
  const char quote = v[i++];
  while (i < v.size() && v[i] != quote) i += v[i] == '\\' ? 2 : 1;
  return i < v.size() ? i + 1 : v.size();
}

// R"delim( ... )delim" with the quote at i; the end of the text when unclosed.
size_t raw_string_end(std::string_view v, size_t i) {
  const size_t open = v.find('(', i + 1);
  if (open == std::string_view::npos) return v.size();
  const std::string close = ")" + std::string(v.substr(i + 1, open - i - 1)) + "\"";
  const size_t end = v.find(close, open + 1);
  return end == std::string_view::npos ? v.size() : end + close.size();
}

// An encoding prefix (L, u, U, u8, optionally followed by R) ending at the
// quote v[j]; R alone counts too.
bool is_literal_prefix(std::string_view word, bool* raw) {
  *raw = !word.empty() && word.back() == 'R';
  if (*raw) word.remove_suffix(1);
  return word.empty() ? *raw : (word == "L" || word == "u" || word == "U" || word == "u8");
}

bool after_has_include_paren(const Tokens& out, size_t first) {
  if (out.size() < first + 2) return false;
  const Token& paren = out[out.size() - 1];
  const Token& name = out[out.size() - 2];
  return paren.is_punct("(") &&
         (name.is_ident("__has_include") || name.is_ident("__has_include_next"));
}

}  // namespace

bool is_identifier_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool is_identifier_char(char c) {
  return is_identifier_start(c) || is_digit(c);
}

void tokenize(std::string_view v, Tokens* out) {
  const size_t first = out->size();
  bool space = false;
  size_t i = 0;
  while (i < v.size()) {
    const char c = v[i];
    if (is_space(c)) {
      space = true;
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < v.size() && v[i + 1] == '/') break;
    if (c == '/' && i + 1 < v.size() && v[i + 1] == '*') {
      const size_t end = v.find("*/", i + 2);
      i = end == std::string_view::npos ? v.size() : end + 2;
      space = true;
      continue;
    }
    Token t;
    t.space_before = space;
    space = false;
    size_t e = i + 1;
    if (is_identifier_start(c)) {
      while (e < v.size() && is_identifier_char(v[e])) ++e;
      bool raw = false;
      if (e < v.size() && (v[e] == '"' || v[e] == '\'') &&
          is_literal_prefix(v.substr(i, e - i), &raw)) {
        if (raw && v[e] == '"') {
          e = raw_string_end(v, e);
          t.kind = TokenKind::kString;
        } else if (!raw) {
          t.kind = v[e] == '"' ? TokenKind::kString : TokenKind::kChar;
          e = quoted_end(v, e);
        } else {
          t.kind = TokenKind::kIdentifier;
        }
      } else {
        t.kind = TokenKind::kIdentifier;
      }
    } else if (is_digit(c) || (c == '.' && e < v.size() && is_digit(v[e]))) {
      t.kind = TokenKind::kNumber;
      while (e < v.size()) {
        const char d = v[e];
        if ((d == '+' || d == '-') &&
            (v[e - 1] == 'e' || v[e - 1] == 'E' || v[e - 1] == 'p' || v[e - 1] == 'P')) {
          ++e;
        } else if (d == '\'' && e + 1 < v.size() && is_identifier_char(v[e + 1])) {
          e += 2;
        } else if (is_identifier_char(d) || d == '.') {
          ++e;
        } else {
          break;
        }
      }
    } else if (c == '"' || c == '\'') {
      t.kind = c == '"' ? TokenKind::kString : TokenKind::kChar;
      e = quoted_end(v, i);
    } else if (c == '<' && after_has_include_paren(*out, first) &&
               v.find('>', i + 1) != std::string_view::npos) {
      t.kind = TokenKind::kHeaderName;
      e = v.find('>', i + 1) + 1;
    } else {
      // Every longer punctuator starts with a single one.
      const bool punct = kSingles.find(c) != std::string_view::npos;
      t.kind = punct ? TokenKind::kPunctuator : TokenKind::kOther;
      for (std::string_view p : kPunctuators) {
        if (!punct) break;
        if (p[0] == c && v.substr(i, p.size()) == p) {
          e = i + p.size();
          break;
        }
      }
    }
    t.text.assign(v.substr(i, e - i));
    out->push_back(std::move(t));
    i = e;
  }
}

std::string remove_splices(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  size_t i = 0;
  while (i < raw.size()) {
    if (raw[i] == '\\') {
      size_t j = i + 1;
      while (j < raw.size() &&
             (raw[j] == ' ' || raw[j] == '\t' || raw[j] == '\f' || raw[j] == '\v'))
        ++j;
      if (j < raw.size() && (raw[j] == '\n' || raw[j] == '\r')) {
        i = j + (raw[j] == '\r' && j + 1 < raw.size() && raw[j + 1] == '\n' ? 2 : 1);
        continue;
      }
    }
    out.push_back(raw[i++]);
  }
  return out;
}

std::string spell(const Token* begin, const Token* end) {
  std::string out;
  for (const Token* t = begin; t != end; ++t) {
    if (t->kind == TokenKind::kPlacemarker) continue;
    if (t != begin && t->space_before && !out.empty()) out.push_back(' ');
    out += t->text;
  }
  return out;
}

}  // namespace lexpack::preprocessor
