// A command's include search list derived from the list of the same command
// without its -I flags, where that is provably what the compiler would print:
// most commands of a build differ only by their -I dirs, and each question
// to the compiler costs a process run.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/store.h"
#include "compiler/compile_command.h"
#include "compiler/identity_types.h"
#include "compiler/search_list.h"

namespace lexpack::compiler {

// Every base question adds `-I <kProbeDir>` last. gcc and clang put
// command-line -I dirs first in the <...> list; a driver that adds dirs
// before them (specs, config files) shows up as a base answer that does not
// start with the probe, and then nothing is derived from it.
inline constexpr std::string_view kProbeDir = "/dev";

struct IncludeSplit {
  std::vector<std::string> include_dirs;  // plain -I values, in order
  // Absolute plain -isystem values, in order: gcc and clang search them after
  // every -I dir and before their own system dirs, wherever they stand.
  std::vector<std::string> system_dirs;
  std::vector<std::string> rest;  // every other search argument, in order
};

// Splits search arguments into -I dirs, -isystem dirs and the rest. False
// when an argument adds to the -I chain in another way, changes how -I paths
// are read, or an -I value is not a plain path the compilers print as given.
// An -isystem value that is not an absolute plain path stays in the rest.
bool split_include_dirs(const std::vector<std::string>& search_args, IncludeSplit* split);

// True when every dir that exists is a directory and is no other one of
// them (the part of derive_search_list's test that needs no base).
bool include_dirs_distinct(const std::vector<std::string>& include_dirs);
bool include_dirs_distinct(const IncludeSplit& split);

// True when an environment variable adds directories to the search list.
bool search_path_environment_set();

// The compiler's own answer (-E -v) for search arguments `args` and
// `language`, from the store's "search" memo (re-asked when a dir it found
// missing has appeared) or asked and memoized; `store` may be null.
base::Result<SearchList> asked_search_list(cache::Store* store, const CompilerIdentity& identity,
                                           compiler::Language language,
                                           const std::vector<std::string>& args,
                                           const std::string& cwd);

// The answer to a base question: `rest`, then -I kProbeDir (as
// asked_search_list, but an error when probe_dropped).
base::Result<SearchList> probed_base_search_list(cache::Store* store,
                                                 const CompilerIdentity& identity,
                                                 compiler::Language language,
                                                 const std::vector<std::string>& rest,
                                                 const std::string& cwd);

// True when the -E -v report says the compiler dropped the probe as the
// duplicate of another dir: then its answer is no base.
bool probe_dropped(std::string_view verbose_output);

// Remembers the answer to the base question with no other arguments (the
// compiler identity asks it anyway, in the same run as its macros).
void remember_bare_probed_list(cache::Store* store, const CompilerIdentity& identity,
                               compiler::Language language, const SearchList& probed);

// The rest of `command`'s search arguments (split_include_dirs) when the
// answer to its base question may travel to another machine: a rest of
// flags only, none naming a path or taking a separate value, so that the
// answer depends on the compiler (its identity) and on which of the dirs it
// prints exist (checked where it is taken). nullopt otherwise, and for an
// empty rest (the bare question travels with the identity).
std::optional<std::vector<std::string>> shareable_base_rest(const CompileCommand& command);

// This store's answer to `command`'s base question (asked in `cwd`), when
// that answer may travel; nullopt otherwise, and for clang (whose
// configuration files, which no answer names, change its lists: its
// identity is asked on every machine too).
std::optional<SearchList> shareable_base_answer(cache::Store* store,
                                                const CompilerIdentity& identity,
                                                const CompileCommand& command,
                                                const std::string& cwd);

// Keeps `probed`, another machine's answer to the base question of
// `command` (with the same identity), as if asked here in `cwd`, when its
// answer may travel and the list holds here; *why says why not otherwise.
bool remember_shared_base_answer(cache::Store* store, const CompilerIdentity& identity,
                                 const CompileCommand& command, const std::string& cwd,
                                 const SearchList& probed, std::string* why);

// `probed` without the probe dir; false when the probe is not first in its
// <...> list.
bool strip_probe(const SearchList& probed, SearchList* base);

// The list for `include_dirs`, then `system_dirs`, put in front of `base`
// (already stripped). A dir that does not exist (nothing at its path) is
// left out and listed as missing, as the compilers do. False, with the
// reason in *why, unless every other dir is a directory and has a (st_dev,
// st_ino) of its own among the -I and -isystem dirs and every dir of
// `base`, so that neither compiler drops or reorders anything else.
bool derive_search_list(const SearchList& base, const std::vector<std::string>& include_dirs,
                        const std::vector<std::string>& system_dirs, SearchList* derived,
                        std::string* why);

// Answers a base question for the rest of a command's search arguments (the
// scan asks each distinct one once); when null, probed_base_search_list.
using BaseLookup = std::function<base::Result<SearchList>(const std::vector<std::string>& rest)>;

// The list for `command` derived as above from its base question. False
// (nothing derived) whenever derivation is not provably exact.
bool derived_search_list(cache::Store* store, const CompilerIdentity& identity,
                         const compiler::CompileCommand& command, const std::string& cwd,
                         SearchList* list, const BaseLookup* base_lookup = nullptr);

// The list for `command`: memoized, else derived (and memoized exactly like
// an asked one), else asked.
base::Result<SearchList> search_list_for(cache::Store* store, const CompilerIdentity& identity,
                                         const compiler::CompileCommand& command,
                                         const std::string& cwd,
                                         const BaseLookup* base_lookup = nullptr);

}  // namespace lexpack::compiler
