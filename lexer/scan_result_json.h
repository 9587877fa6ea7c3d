// JSON rendering of a ScanResult (one line per file) for `lexpack lex --json`.
#pragma once

#include <string>
#include <string_view>

#include "lexer/scan_result.h"

namespace lexpack::lexer {

// Appends `s` as a JSON string; bytes outside printable ASCII are \u00XX.
void append_json_string(std::string* out, std::string_view s);

// {"file":..., "directives":[{"kind","line","offset",...}], "include_guard", ...}
std::string to_json(std::string_view file, const ScanResult& result);

}  // namespace lexpack::lexer
