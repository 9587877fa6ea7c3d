// Byte classes and line-splice helpers shared by the scanner's parts. A splice
// is a backslash, optional horizontal whitespace (GCC accepts it), then a line end.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

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

// High bit set in each byte of the eight-byte word x that is an identifier
// byte (the same set as is_ident_char). Every sum below stays inside its byte
// (the low seven bits are at most 0x7f), so bytes never disturb each other.
inline uint64_t ident_byte_flags(uint64_t x) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHighs = 0x8080808080808080ull;
  const uint64_t v = x & ~kHighs;              // low seven bits
  const uint64_t folded = v | (0x20 * kOnes);  // 'A'..'Z' -> 'a'..'z'
  const uint64_t letter = (folded + (0x80 - 'a') * kOnes) & ~(folded + (0x7f - 'z') * kOnes);
  const uint64_t digit = (v + (0x80 - '0') * kOnes) & ~(v + (0x7f - '9') * kOnes);
  const uint64_t underscore = ~((v ^ ('_' * kOnes)) + ~kHighs);
  return (x | letter | digit | underscore) & kHighs;  // x: bytes >= 0x80
}

// The end of the run of identifier bytes that starts at p (p itself when *p
// is none); eight bytes per step while eight remain before end, so names of
// any length cost no branch per byte.
inline const char* skip_ident_bytes(const char* p, const char* end) {
  while (end - p >= 8) {
    uint64_t x;
    std::memcpy(&x, p, sizeof x);
    if constexpr (std::endian::native == std::endian::big) x = __builtin_bswap64(x);
    const uint64_t stops = ~ident_byte_flags(x) & 0x8080808080808080ull;
    if (stops) return p + (std::countr_zero(stops) >> 3);
    p += 8;
  }
  while (p < end && is_ident_char(*p)) ++p;
  return p;
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
