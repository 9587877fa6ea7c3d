// Whether a compile's key may name the paths under base_dir relative to the
// working directory (so another checkout shares it), and those names. A path
// stays absolute in the key whenever an output could contain it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
  // Not relocated only because the compile makes a precompiled header: its
  // output is this checkout's, but its key may still name its maker
  // (pch_maker_key).
  bool pch_maker_relocatable = false;
  // When relocated: the content the key gives closure files whose include
  // directives name paths under base_dir (relocated_content.h), by index.
  std::vector<std::pair<size_t, cache::Hash128>> relocated_contents;

  // The content the key gives closure file `index`.
  const cache::Hash128& content_of(size_t index, const cache::Hash128& content) const;

  // `path` as the key names it.
  std::string name(std::string_view path) const;
  // The same, without a copy when that is `path` itself (a path outside
  // base_dir, or none relocated); else made in `*storage`.
  std::string_view name_in(std::string_view path, std::string* storage) const;
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
