// @file arguments: gcc and clang read further arguments from a file, split on
// white space with quotes and backslash escapes. The launcher expands them so
// that the key covers what the compiler will really see.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lexpack::compiler {

// Splits response-file text the way gcc's libiberty buildargv does.
std::vector<std::string> split_response_text(std::string_view text);

// Replaces every "@file" in args (nested up to a small depth) by its contents.
// Returns false with *err set when a file cannot be read or nesting is too deep.
bool expand_response_files(std::vector<std::string>* args, std::string* err);

}  // namespace lexpack::compiler
