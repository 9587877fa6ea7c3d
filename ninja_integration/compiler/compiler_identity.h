// Which compiler a command runs, decided by what the binary is (its --version
// answer), and a hash of everything about it that can change an object: the
// binaries, version, default search dirs and predefined macros per language.
#pragma once

#include <string>

#include "base/status.h"
#include "cache/store.h"
#include "ninja_integration/compiler/identity.h"
#include "ninja_integration/compiler/remote_identity.h"

namespace lexpack::compiler {

// The identity of `compiler` (a name or path), from the store's "compiler"
// memo when the binary's stat signature is unchanged, else by asking it.
// `store` may be null. A program that is no gcc or clang gets kUnknown.
// With a `remote`, a fresh cache first takes the answer another machine
// stored for the same driver bytes (remote_identity.h), and an answer asked
// here is stored there for others.
base::Result<CompilerIdentity> compiler_identity(cache::Store* store, const std::string& compiler,
                                                 RemoteAnswers* remote = nullptr);

}  // namespace lexpack::compiler
