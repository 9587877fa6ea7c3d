// Entry point of the directive scanner: bytes in, ScanResult out. The state
// machine is shared; the kernel only decides how fast candidate bytes are found.
#pragma once

#include <string_view>

#include "lexer/kernel.h"
#include "lexer/scan_result.h"

namespace lexpack::lexer {

// Scans any bytes (not necessarily valid text). Never fails: constructs it
// cannot make sense of are reported in ScanResult::diagnostics.
ScanResult scan(std::string_view bytes, const Kernel& kernel);

}  // namespace lexpack::lexer
