// For a TU whose computed include the evaluation cannot expand, only the
// compiler knows which files it reads: one -M run, remembered against the
// TU's closure (its files' contents) and checked by each file's stat.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "cache/store.h"
#include "ninja_integration/closure/dependency_closure.h"
#include "ninja_integration/command/compile_command.h"
#include "ninja_integration/compiler/compiler_identity.h"

namespace lexpack::scan {

// The files `command` reads as the compiler reports them (-M), absolute and
// normal, the source first. `store` (may be null) remembers the answer.
base::Result<std::vector<std::string>> compiler_deps(cache::Store* store,
                                                     const compiler::CompilerIdentity& identity,
                                                     const command::CompileCommand& command,
                                                     const std::string& cwd,
                                                     const closure::Closure& walk);

// The dependencies of a Make rule as -M writes it ("out.o: a.cc b.h \\\n c.h").
std::vector<std::string> parse_make_deps(std::string_view rule);

// The command's arguments with its outputs and dependency-file flags taken
// out and -M put in: what asks the compiler for the files it reads.
std::vector<std::string> dependency_arguments(const command::CompileCommand& command);

}  // namespace lexpack::scan
