// A TU that reaches __has_include through a macro (`#define HAS(x)
// __has_include(x)`, a portability idiom of many libraries) is cacheable
// once its conditionals are evaluated: this runs the preprocessor over it
// with the compiler's own predefined macros and builtin answers, so every
// question the compiler asks is asked and recorded in the closure.
#pragma once

#include <string>

#include "cache/store.h"
#include "lexer/kernel.h"
#include "ninja_integration/closure/dependency_closure.h"
#include "ninja_integration/command/compile_command.h"
#include "ninja_integration/compiler/compiler_identity.h"

namespace lexpack::closure {

class CompilerPresenceEvaluator : public PresenceEvaluator {
 public:
  // `store` (may be null) remembers the compiler's answers per identity and
  // arguments; `cwd` is the compile's working directory.
  CompilerPresenceEvaluator(cache::Store* store, const compiler::CompilerIdentity& identity,
                            const command::CompileCommand& command, std::string cwd,
                            const lexer::Kernel* kernel);

  std::string evaluate(const Resolution& source, const std::vector<Resolution>& forced,
                       const Ask& ask) override;

 private:
  cache::Store* store_;
  const compiler::CompilerIdentity& identity_;
  const command::CompileCommand& command_;
  std::string cwd_;
  const lexer::Kernel* kernel_;
};

// The command's arguments that decide its predefined macros and builtin
// answers: everything but outputs, dependency-file flags, forced includes
// and the source (kept: -D, -U, -std, -f, -m, -O, ...).
std::vector<std::string> macro_arguments(const command::CompileCommand& command);

}  // namespace lexpack::closure
