// The arguments of a compile command that decide the compiler's predefined
// macros and builtin answers, and how they split between the compiler's -dM
// run and the -D values an evaluation applies itself.
#pragma once

#include <string>
#include <vector>

#include "compiler/compile_command.h"

namespace lexpack::closure {

// The command's arguments that decide its predefined macros and builtin
// answers: everything but outputs, dependency-file flags, forced includes
// and the source (kept: -D, -U, -std, -f, -m, -O, include directories
// unless `include_dirs` is false, ...).
std::vector<std::string> macro_arguments(const compiler::CompileCommand& command,
                                         bool include_dirs = true);

// macro_arguments split for asking the compiler: `ask` goes to the
// compiler's -dM run; `defines` (the command's -D values, in order) are
// applied by the evaluation after the predefined macros, as the compiler
// does, and warning flags are left out (they define nothing). Targets that
// differ only in those then share one compiler run and one set of
// predefined macros. The -D values stay in `ask` (`defines` empty) unless
// `defines_apart`, or when the command has a -U. Nothing is left out when
// a flag passes macros past the command's parse or takes the next argument
// as its value (-Wp, -Xpreprocessor, -Xclang, -Xlinker, --define-macro).
struct MacroArguments {
  std::vector<std::string> ask;
  std::vector<std::string> defines;
};
MacroArguments split_macro_arguments(const compiler::CompileCommand& command,
                                     bool include_dirs = true, bool defines_apart = true);

}  // namespace lexpack::closure
