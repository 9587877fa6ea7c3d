// Byte classes and line-splice helpers shared by the scanner's parts. A splice
// is a backslash, optional horizontal whitespace (GCC accepts it), then a line end.
#pragma once

namespace lexpack::lexer {

inline bool is_hspace(char c) {
  return c == ' ' || c == '\t' || c == '\f' || c == '\v';
}
inline bool is_newline(char c) {
  return c == '\n' || c == '\r';
}
inline bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
// Identifier bytes: letters, '_', digits, and every byte >= 0x80 (UTF-8).
// Tables defined in chars.cpp, so each test is one load.
extern const bool kIdentStart[256];
extern const bool kIdentPart[256];

inline bool is_ident_start(char c) {
  return kIdentStart[static_cast<unsigned char>(c)];
}
inline bool is_ident_char(char c) {
  return kIdentPart[static_cast<unsigned char>(c)];
}

// If `p` (which must point at '\\') starts a splice, sets *after past its line
// end and returns true.
inline bool is_splice(const char* p, const char* end, const char** after) {
  const char* q = p + 1;
  while (q < end && is_hspace(*q)) ++q;
  if (q == end) return false;
  if (*q == '\n') {
    *after = q + 1;
    return true;
  }
  if (*q == '\r') {
    *after = (q + 1 < end && q[1] == '\n') ? q + 2 : q + 1;
    return true;
  }
  return false;
}

// First position at or after p that is not the start of a splice.
inline const char* skip_splices(const char* p, const char* end) {
  const char* after;
  while (p < end && *p == '\\' && is_splice(p, end, &after)) p = after;
  return p;
}

// Given `p` just after a line end character sequence ending at p-1, returns the
// start of that line end ("\r\n" counts as one).
inline const char* line_end_start(const char* p, const char* lower) {
  const char* q = p - 1;
  if (*q == '\n' && q > lower && q[-1] == '\r') --q;
  return q;
}

}  // namespace lexpack::lexer
