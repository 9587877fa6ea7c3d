// Reads the Make-syntax dependency files gcc and clang write (-MD), to learn
// which files the compiler really opened: the launcher's self-check compares
// them with the scanned closure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lexpack::base {

// The prerequisites of every rule in `text`, in order, unescaped ("\ ", "\#",
// "$$", backslash-newline). Returns false with *err set on text it cannot read.
bool parse_depfile(std::string_view text, std::vector<std::string>* prerequisites,
                   std::string* err);

}  // namespace lexpack::base
