// Whether a compile's key may name the paths under base_dir relative to the
// working directory (so another checkout shares it), and those names. A path
// stays absolute in the key whenever an output could contain it.
#pragma once

#include <string>
#include <string_view>

#include "closure/dependency_closure.h"
#include "compiler/compile_command.h"

namespace lexpack::closure {

struct KeyRelocation {
  std::string base_dir;  // empty: relocation is off
  std::string cwd;
  bool relocated = false;
  // When base_dir is set but the key keeps absolute paths: why, with the flag
  // that would make it relocatable.
  std::string not_relocatable;

  // `path` as the key names it.
  std::string name(std::string_view path) const;
};

// Decides for one compile. Relocation is all or nothing: every argument,
// closure file and probe under base_dir is named relative, or none is, so
// stored text (depfile, messages) can be written back in any checkout.
KeyRelocation decide_relocation(const compiler::CompileCommand& command, const std::string& cwd,
                                const Closure& closure, std::string_view base_dir);

// The arguments as the key hashes them (only path values of the flags that
// name files or prefix maps are renamed).
std::vector<std::string> relocated_args(const compiler::CompileCommand& command,
                                        const KeyRelocation& relocation);

}  // namespace lexpack::closure
