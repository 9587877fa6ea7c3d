// JSON string quoting for everything lexpack prints as JSON (`lex --json`,
// scan graphs, P1689, stats). Paths are bytes, not necessarily UTF-8, and
// JSON must be UTF-8: valid UTF-8 passes through, any other byte is escaped.
#pragma once

#include <string>
#include <string_view>

namespace lexpack::base {

// Appends `s` to *out as a quoted JSON string: '"' and '\\' escaped, \n \r \t
// as such, other control bytes and DEL as \u00XX; a well-formed UTF-8
// sequence is copied as is, and each byte >= 0x80 that is not part of one
// becomes \u00XX (the byte read as Latin-1), so the output is always valid
// UTF-8 and valid JSON.
void append_json_string(std::string* out, std::string_view s);

// The same, as a new string.
std::string json_string(std::string_view s);

}  // namespace lexpack::base
