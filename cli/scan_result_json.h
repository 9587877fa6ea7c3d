// JSON rendering of a ScanResult (one line per file) for `lexpack lex --json`.
#pragma once

#include <string>
#include <string_view>

#include "lexer/scan_result.h"

namespace lexpack::cli {

// {"file":..., "directives":[{"kind","line","offset",...}], "include_guard", ...}
std::string to_json(std::string_view file, const lexer::ScanResult& result);

}  // namespace lexpack::cli
