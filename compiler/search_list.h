// The include search list of one command line, exactly as the compiler will
// use it (after its own de-duplication and dropping of missing dirs): asked
// from the compiler with -E -v, or derived from such an answer where that is
// exact (derived_search_list.h), and remembered in the store.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/store.h"
#include "compiler/compile_command.h"
#include "compiler/identity_types.h"

namespace lexpack::compiler {

struct SearchList {
  std::vector<std::string> quote_dirs;    // -iquote
  std::vector<std::string> bracket_dirs;  // -I, -isystem, system dirs, -idirafter
  // Dirs the compiler ignored because they did not exist: if one appears,
  // the list is asked again.
  std::vector<std::string> missing_dirs;
  // Search dirs gcc dropped as the same directory as a listed one under
  // another path, not only another spelling of it (`b/../inc` beside `inc`,
  // a symlink): each was that directory when the list was made. If one ever
  // becomes a directory of its own, the compiler searches it, so whatever
  // reuses the list (its memo, a closure memo) checks each pair first.
  struct SameDir {
    std::string dropped;
    std::string kept;
    bool operator==(const SameDir&) const = default;
  };
  std::vector<SameDir> same_dirs;
  // False when the compiler dropped a search dir as the same directory as
  // another one and the pair cannot be told (clang, which may name the one
  // it kept): nothing in the list would tell when it becomes a directory of
  // its own. Such a list, and closures found with it, are never memoized.
  // (Not encoded: only memoizable lists are stored.)
  bool memoizable = true;
  bool operator==(const SearchList&) const = default;
};

// The first line of *text without its line end (and a '\r' before it);
// *text moves past it. For reading compiler reports line by line.
std::string_view take_line(std::string_view* text);

// The directories holding the GCC installations clang reports with -v
// ("Found candidate GCC installation: .../gcc/<triple>/<version>"): each
// installation's parent and grandparent, once each.
std::vector<std::string> gcc_installation_dirs(std::string_view verbose_output);

// Parses the stderr of `cc -E -v`. False when the markers are missing.
bool parse_search_list(std::string_view verbose_output, SearchList* list);

// Whether a list the compiler printed (`verbose_output`, for `args`) may be
// memoized: every search dir it dropped as a duplicate must be the same path
// as a listed one, spelled differently at most by "./", "//", "/.", a
// trailing '/' or relative to the working directory, so it can never become
// a directory of its own. gcc names each dir it drops; clang may name the one
// it kept, so with clang every dir of the cc1 command it prints (the
// command's, CPATH-like variables', its builtin ones) must be listed.
// With `same_dirs`, a dir gcc dropped that is the same directory as a listed
// one under another path is harmless too: the pair is added there.
bool duplicates_only_by_spelling(const SearchList& list, std::string_view verbose_output,
                                 const std::vector<std::string>& args, CompilerKind kind,
                                 std::vector<SearchList::SameDir>* same_dirs = nullptr);

// Whether each pair of `same_dirs` still names one directory.
bool same_dirs_hold(const std::vector<SearchList::SameDir>& same_dirs);

std::string encode_search_list(const SearchList& list);
bool decode_search_list(std::string_view bytes, SearchList* list);

// Environment variables that change what a compile reads or writes, as
// name=value lines (used in keys).
std::string relevant_environment();

}  // namespace lexpack::compiler
