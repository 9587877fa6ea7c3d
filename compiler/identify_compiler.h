// Which compiler a command runs, decided by what the binary is (its --version
// answer), and a hash of everything about it that can change an object: the
// binaries, version, default search dirs and predefined macros per language.
#pragma once

#include <string>

#include "base/status.h"
#include "cache/store.h"
#include "compiler/compile_command.h"
#include "compiler/identity_types.h"
#include "compiler/shared_identity.h"

namespace lexpack::compiler {

// True when a LIBRARY_PATH directory holds a specs file (gcc reads it; an
// empty entry is the working directory): then no answer of the compiler's
// travels.
bool library_path_has_specs();

// The identity of `compiler` (a name or path), from the store's "compiler"
// memo when the binary's stat signature is unchanged, else by asking it.
// `store` may be null. A program that is no gcc or clang gets kUnknown.
// With a `remote`, a fresh cache first takes the answer another machine
// stored for the same driver bytes (remote_identity.h), and an answer asked
// here is stored there for others.
base::Result<CompilerIdentity> compiler_identity(cache::Store* store, const std::string& compiler,
                                                 RemoteAnswers* remote = nullptr);

// A command that is cacheable as written but not with this compiler: the
// reason's counter name ("" when it is cacheable), and *why a sentence.
// clang records the times and sizes of the headers in a precompiled header
// it makes and refuses it when they differ: one made elsewhere, served from
// the cache, would break the compiles that use it.
std::string refused_by_compiler(const compiler::CompileCommand& command, CompilerKind kind,
                                std::string* why);

}  // namespace lexpack::compiler
