// Compilers wrap a depfile's first rule at a column limit, so the same
// dependencies under a longer checkout path break lines elsewhere. A depfile
// stored relocated is wrapped again, the way the compiler that wrote it
// does, once its paths name this checkout.
#pragma once

#include <string>
#include <string_view>

namespace lexpack::base {

enum class DepfileFlow { kNone, kGcc, kClang };

// Which compiler's wrapping reproduces `depfile` byte for byte; kNone if
// neither does.
DepfileFlow detect_depfile_flow(std::string_view depfile);

// `depfile`'s first rule wrapped again in `flow`'s way (the rest kept).
std::string reflow_depfile(std::string_view depfile, DepfileFlow flow);

}  // namespace lexpack::base
