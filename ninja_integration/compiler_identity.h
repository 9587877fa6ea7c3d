// Which compiler a command runs, decided by what the binary is (its --version
// answer), and a hash of everything about it that can change an object: the
// binaries, version, default search dirs and predefined macros per language.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cache/hash.h"
#include "cache/status.h"
#include "cache/store.h"

namespace lexpack::ninja {

enum class CompilerKind : uint8_t { kUnknown = 0, kGcc = 1, kClang = 2 };

struct CompilerIdentity {
  CompilerKind kind = CompilerKind::kUnknown;
  std::string program;  // the executable that runs (found in PATH)
  cache::Hash128 hash;
  std::string version;  // first line of --version
  // Directories whose change may change the answer without the binary
  // changing: where clang found GCC installations (a new version there is
  // chosen instead, with its own libstdc++ headers). With their signatures
  // when asked; the memo holds while they stay the same.
  std::vector<std::pair<std::string, cache::StatSignature>> watched_dirs;
};

// The directories holding the GCC installations clang reports with -v
// ("Found candidate GCC installation: .../gcc/<triple>/<version>"): each
// installation's parent and grandparent, once each.
std::vector<std::string> gcc_installation_dirs(std::string_view verbose_output);

// Recognises a compiler from its --version output.
CompilerKind kind_from_version_text(std::string_view text);

// The identity of `compiler` (a name or path), from the store's "compiler"
// memo when the binary's stat signature is unchanged, else by asking it.
// `store` may be null. A program that is no gcc or clang gets kUnknown.
cache::Result<CompilerIdentity> compiler_identity(cache::Store* store, const std::string& compiler);

}  // namespace lexpack::ninja
