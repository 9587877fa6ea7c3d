// What identifies a compiler: its kind, decided by what the binary answers to
// --version, and a hash of everything about it that can change an object. The
// types only; identify_compiler.h asks a compiler for them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/file_stat.h"
#include "cache/hash/hash.h"

namespace lexpack::compiler {

enum class CompilerKind : uint8_t { kUnknown = 0, kGcc = 1, kClang = 2 };

// The assembler the driver runs to make an object file (gcc always, clang
// with -fno-integrated-as): its bytes decide the object as much as the
// compiler's do, and it comes from another package (binutils) that is
// updated on its own. `answer` is what -print-prog-name=as says: a path, or
// a bare name the driver runs through PATH. `path` is the file that answer
// runs here (empty: none), and `sig` that file's signature when asked.
struct Assembler {
  std::string answer;
  std::string path;
  base::StatSignature sig;
};

struct CompilerIdentity {
  CompilerKind kind = CompilerKind::kUnknown;
  std::string program;  // the executable that runs (found in PATH)
  cache::Hash128 hash;
  std::string version;  // first line of --version
  // Directories whose change may change the answer without the binary
  // changing: where clang found GCC installations (a new version there is
  // chosen instead, with its own libstdc++ headers). With their signatures
  // when asked; the memo holds while they stay the same.
  std::vector<std::pair<std::string, base::StatSignature>> watched_dirs;
  Assembler assembler;
};

// Recognises a compiler from its --version output.
CompilerKind kind_from_version_text(std::string_view text);

}  // namespace lexpack::compiler
