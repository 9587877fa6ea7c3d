// What the compiler says before any file is read: its predefined macros and
// its answers to builtin questions (__has_builtin(...) and the like), from
// one `compiler <args> -dM -E` run, and the text they are remembered as.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/compile_command.h"
#include "compiler/identify_compiler.h"

namespace lexpack::closure {

// What the compiler says before any file is read: its -dM output (the
// answers' own macros taken out) and the answers to builtin questions.
struct CompilerFacts {
  std::string predefined;
  std::map<std::string, intmax_t> answers;  // "__has_builtin(__builtin_expect)" -> 1
};

// Runs the compiler with `arguments` over a file that asks `questions` of its
// preprocessor, and takes its -dM output apart.
base::Result<CompilerFacts> ask_compiler(const compiler::CompilerIdentity& identity,
                                         const compiler::CompileCommand& command,
                                         const std::vector<std::string>& arguments,
                                         const std::vector<std::string>& questions);

// The text the store keeps for `f`, and back (false: not such a text).
std::string encode_facts(const CompilerFacts& f);
bool decode_facts(std::string_view bytes, CompilerFacts* f);

}  // namespace lexpack::closure
