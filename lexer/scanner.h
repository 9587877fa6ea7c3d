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

// The same scan into *out, replacing all it held but keeping its memory:
// scanning many files into one ScanResult allocates only when a file needs
// more room than the ones before it.
void scan_into(std::string_view bytes, const Kernel& kernel, ScanResult* out);

// The quad search the scanner runs over each whole file before the main loop
// (for the words that matter outside directives: __DATE__, __TIME__,
// __TIMESTAMP__, _Pragma, import, module). The benchmark times it alone.
const QuadSearch& prepass_search();

}  // namespace lexpack::lexer
