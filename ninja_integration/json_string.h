// JSON string quoting for the outputs lexpack writes (scan graphs, P1689,
// stats). Bytes >= 0x80 pass through, so UTF-8 paths stay readable.
#pragma once

#include <string>
#include <string_view>

namespace lexpack::ninja {

// `s` as a quoted JSON string: '"' and '\\' escaped, control bytes as \u00XX.
std::string json_string(std::string_view s);

}  // namespace lexpack::ninja
