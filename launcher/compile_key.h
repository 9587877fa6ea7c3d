// The action key of one compile as the launcher's slow path computes it:
// search list, closure walk, relocation, key. Shared by the launcher and the
// whole-build prefetch, so that a key computed ahead is the key a compile
// then looks up.
#pragma once

#include <string>

#include "base/status.h"
#include "cache/hash/hash.h"
#include "cache/store.h"
#include "closure/dependency_closure.h"
#include "closure/file_state.h"
#include "closure/key_relocation.h"
#include "compiler/compile_command.h"
#include "compiler/identify_compiler.h"
#include "compiler/search_list.h"
#include "lexer/kernel.h"

namespace lexpack::launcher {

struct CompileKey {
  compiler::SearchList list;
  closure::Closure closure;
  closure::KeyRelocation relocation;
  cache::Hash128 key;  // before the date (closure.uses_date)
};

// `store` answers the search list; `writable` says whether the compiler's
// answers met on the way may be recorded in it. `cwd` is the compile's
// working directory as the compiler names it, and the process's own.
base::Result<CompileKey> compute_compile_key(cache::Store* store, bool writable,
                                             closure::FileStates* files,
                                             const compiler::CompilerIdentity& identity,
                                             const compiler::CompileCommand& cmd,
                                             const std::string& cwd, const std::string& base_dir,
                                             const lexer::Kernel* kernel);

}  // namespace lexpack::launcher
