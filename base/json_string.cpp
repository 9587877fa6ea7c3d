// One JSON escaper for every output: two used to disagree on bytes >= 0x7f
// (one escaped them all, mangling UTF-8 paths; one passed them all, writing
// invalid UTF-8 for other bytes).
#include "base/json_string.h"

#include <cstdint>
#include <cstdio>

namespace lexpack::base {
namespace {

// The length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629:
// no overlong forms, no surrogates, nothing above U+10FFFF), 0 when there is
// none there.
size_t utf8_sequence(std::string_view s) {
  auto byte = [&](size_t i) { return i < s.size() ? uint8_t(s[i]) : uint8_t(0); };
  auto cont = [&](size_t i) { return (byte(i) & 0xc0) == 0x80; };
  uint8_t b0 = byte(0);
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(1) ? 2 : 0;
  if (b0 >= 0xe0 && b0 <= 0xef) {
    uint8_t lo = b0 == 0xe0 ? 0xa0 : 0x80, hi = b0 == 0xed ? 0x9f : 0xbf;
    return byte(1) >= lo && byte(1) <= hi && cont(2) ? 3 : 0;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    uint8_t lo = b0 == 0xf0 ? 0x90 : 0x80, hi = b0 == 0xf4 ? 0x8f : 0xbf;
    return byte(1) >= lo && byte(1) <= hi && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

void append_escaped(std::string* out, uint8_t c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\u%04x", c);
  out->append(buf);
}

}  // namespace

void append_json_string(std::string* out, std::string_view s) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    uint8_t c = uint8_t(s[i]);
    if (c >= 0x80) {
      size_t n = utf8_sequence(s.substr(i));
      if (n == 0) {
        append_escaped(out, c);
        ++i;
      } else {
        out->append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          append_escaped(out, c);
        } else {
          out->push_back(char(c));
        }
    }
  }
  out->push_back('"');
}

std::string json_string(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  append_json_string(&out, s);
  return out;
}

}  // namespace lexpack::base
