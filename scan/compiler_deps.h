// For a TU whose computed include the evaluation cannot expand, only the
// compiler knows which files it reads: one -M run, remembered against the
// TU's closure (its files' contents) and checked by each file's stat and by
// the absence of every file that could shadow one of them.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "cache/store.h"
#include "closure/dependency_closure.h"
#include "compiler/compile_command.h"
#include "compiler/identify_compiler.h"
#include "compiler/search_list.h"

namespace lexpack::scan {

// The files `command` reads as the compiler reports them (-M), absolute and
// normal, the source first. `store` (may be null) remembers the answer;
// `list` is the command's include search, where a file that would shadow a
// dependency could appear.
base::Result<std::vector<std::string>> compiler_deps(cache::Store* store,
                                                     const compiler::CompilerIdentity& identity,
                                                     const compiler::CompileCommand& command,
                                                     const std::string& cwd,
                                                     const closure::Closure& walk,
                                                     const compiler::SearchList& list);

// The paths that, were they to appear, could be found before one of `deps`
// (absolute, normal): each dependency's name relative to any directory it
// may have been found through (a search directory, or the directory of a
// file that includes with quotes: any dependency's), put under every other
// such directory. Only those missing now.
std::vector<std::string> shadow_candidates(const std::vector<std::string>& deps,
                                           const compiler::SearchList& list,
                                           const std::string& cwd);

// The dependencies of a Make rule as -M writes it ("out.o: a.cc b.h \\\n c.h").
std::vector<std::string> parse_make_deps(std::string_view rule);

// The command's arguments with its outputs and dependency-file flags taken
// out and -M put in: what asks the compiler for the files it reads.
std::vector<std::string> dependency_arguments(const compiler::CompileCommand& command);

}  // namespace lexpack::scan
