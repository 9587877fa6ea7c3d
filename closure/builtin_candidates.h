// Which builtin questions (`__has_builtin(x)` and the like) a file may make
// a TU ask, read from its lexer scan without evaluating it: the evaluation
// asks them of the compiler ahead, in one run with the others.
#pragma once

#include <set>
#include <string>
#include <utility>

#include "lexer/scan_result.h"

namespace lexpack::closure {

// The `op(identifier)` calls of builtin queries written out in the file's
// #if and #elif lines: questions a TU that reads the file may ask, so that
// one compiler run answers them all instead of one run per question met.
// Libraries often call them through a macro of their own named after the
// query (`#define _GLIBCXX_HAS_BUILTIN(B) __has_builtin(B)`): a call of a
// name that ends in `_has_builtin`, whatever its case, counts as a question
// of __has_builtin too. Asking one the TU does not ask costs nothing.
void note_candidates(const lexer::ScanResult& scan,
                     std::set<std::pair<std::string, std::string>>* out);

}  // namespace lexpack::closure
