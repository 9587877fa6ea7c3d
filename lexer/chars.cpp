// The identifier byte tables behind is_ident_start / is_ident_char.
#include "lexer/chars.h"

namespace lexpack::lexer {
namespace {

struct IdentTables {
  bool start[256] = {};
  bool part[256] = {};
  constexpr IdentTables() {
    for (int c = 0; c < 256; ++c) {
      start[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
      part[c] = start[c] || (c >= '0' && c <= '9');
    }
  }
};
constexpr IdentTables kTables;

}  // namespace

#define LEXPACK_ROWS(t, n)                                                                        \
  t[n], t[n + 1], t[n + 2], t[n + 3], t[n + 4], t[n + 5], t[n + 6], t[n + 7], t[n + 8], t[n + 9], \
      t[n + 10], t[n + 11], t[n + 12], t[n + 13], t[n + 14], t[n + 15]
#define LEXPACK_TABLE(t)                                                                      \
  LEXPACK_ROWS(t, 0), LEXPACK_ROWS(t, 16), LEXPACK_ROWS(t, 32), LEXPACK_ROWS(t, 48),          \
      LEXPACK_ROWS(t, 64), LEXPACK_ROWS(t, 80), LEXPACK_ROWS(t, 96), LEXPACK_ROWS(t, 112),    \
      LEXPACK_ROWS(t, 128), LEXPACK_ROWS(t, 144), LEXPACK_ROWS(t, 160), LEXPACK_ROWS(t, 176), \
      LEXPACK_ROWS(t, 192), LEXPACK_ROWS(t, 208), LEXPACK_ROWS(t, 224), LEXPACK_ROWS(t, 240)

const bool kIdentStart[256] = {LEXPACK_TABLE(kTables.start)};
const bool kIdentPart[256] = {LEXPACK_TABLE(kTables.part)};

}  // namespace lexpack::lexer
