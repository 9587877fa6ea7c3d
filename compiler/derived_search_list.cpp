// Where a command's search list comes from: the store's memo, a derivation
// from the list without -I flags (only when every condition that makes it
// exact holds), or the compiler itself.
#include "compiler/derived_search_list.h"

#include <errno.h>
#include <sys/stat.h>

#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <utility>

#include "base/byte_codec.h"
#include "base/file_stat.h"
#include "base/process.h"
#include "cache/once_across_processes.h"
#include "compiler/identify_compiler.h"
#include "compiler/shared_identity.h"

namespace lexpack::compiler {
namespace {

constexpr std::string_view kSearchFormat = "lexpack-search-2";

// Arguments after which -I dirs are not simply put first: other ways into
// the -I chain, and options that change how a path in it is read.
constexpr std::string_view kRefusedPrefixes[] = {
    "--include-directory",
    "-iprefix",
    "-iwithprefix",
    "-F",
    "-iframework",
    "-working-directory",
    "--config",
    "-I-",
    "-Xclang",
    "-Xpreprocessor",
    "-Wp,",
    "-ivfsoverlay",
    "-B",
    "--gcc-toolchain",
};

// Variables that add search dirs, or (clang's CCC_OVERRIDE_OPTIONS) rewrite
// the command's own -I flags before the compiler sees them.
constexpr const char* kSearchPathEnv[] = {"CPATH",
                                          "C_INCLUDE_PATH",
                                          "CPLUS_INCLUDE_PATH",
                                          "OBJC_INCLUDE_PATH",
                                          "OBJCPLUS_INCLUDE_PATH",
                                          "CCC_OVERRIDE_OPTIONS"};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Whether `arg`, an option lexpack does not know to take a value, certainly
// does not take the next argument as one: an -I right after an option that
// does is that option's value, not a search dir (clang's `-Xanalyzer -Ifoo`,
// `-Xarch_x86_64 -Ifoo`, `-mllvm -Ifoo`).
bool leaves_next_alone(std::string_view arg) {
  if (arg.empty() || arg[0] != '-') return true;             // a value or an input
  if (arg.find('=') != std::string_view::npos) return true;  // its value is joined
  if (arg == "-mllvm" || starts_with(arg, "-gcc")) return false;
  for (std::string_view p : {"-f", "-m", "-O", "-W", "-g", "-nostdinc", "-nostdlib"}) {
    if (starts_with(arg, p)) return true;
  }
  for (std::string_view a : {"-w", "-pthread", "-pipe", "-pedantic", "-pedantic-errors", "-ansi",
                             "-undef", "-trigraphs", "-C", "-P", "-H", "-v"}) {
    if (arg == a) return true;
  }
  return false;
}

// A path gcc and clang both print exactly as given: no sysroot prefix, no
// empty component, no trailing slash, nothing that would break the
// line-based -E -v report. "." and ".." components are printed as given
// (`-I src/catch2/..`, CMake's `/path/.`) and resolved by the kernel, as
// the stat of derive_search_list resolves them.
bool plain_path(std::string_view dir) {
  if (dir.empty() || dir == "-" || dir[0] == '=' || starts_with(dir, "$SYSROOT")) return false;
  if (dir.back() == '/' || dir.find("//") != std::string_view::npos) return false;
  for (char c : dir) {
    if (c == '\n' || c == '\r' || c == '\0') return false;
  }
  size_t start = dir[0] == '/' ? 1 : 0;
  while (start <= dir.size()) {
    size_t end = dir.find('/', start);
    if (end == std::string_view::npos) end = dir.size();
    std::string_view part = dir.substr(start, end - start);
    if (part.empty()) return false;
    start = end + 1;
  }
  return true;
}

struct DirId {
  dev_t dev;
  ino_t ino;
  bool operator==(const DirId&) const = default;
};

bool dir_id(const std::string& path, DirId* id) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  *id = {st.st_dev, st.st_ino};
  return true;
}

// Nothing at `path` (nor at some directory on the way to it): both compilers
// leave such an -I or -isystem dir out of the list without a word but the
// verbose report's "ignoring nonexistent directory". Anything else that is
// not a directory (a file, a path through a file, a directory that cannot
// be entered) gets a warning or an error of its own, so it is asked.
bool absent(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) != 0 && errno == ENOENT;
}

void write_list(base::VarintWriter* w, const std::vector<std::string>& v) {
  w->u64(v.size());
  for (const std::string& s : v) w->str(s);
}

std::string memo_key(const CompilerIdentity& identity, compiler::Language language,
                     const std::vector<std::string>& args, const std::string& cwd) {
  base::VarintWriter key;
  key.str(kSearchFormat);
  key.u64(identity.hash.lo);
  key.u64(identity.hash.hi);
  key.str(cwd);
  key.str(compiler::language_name(language));
  key.str(relevant_environment());
  write_list(&key, args);
  return key.take();
}

std::vector<std::string> with_probe(const std::vector<std::string>& rest) {
  std::vector<std::string> args = rest;
  args.emplace_back("-I");
  args.emplace_back(kProbeDir);
  return args;
}

// A base question with no other arguments names no relative path: one
// answer serves every directory.
const std::string& base_cwd(const std::vector<std::string>& rest, const std::string& cwd) {
  static const std::string kAnywhere;
  return rest.empty() ? kAnywhere : cwd;
}

std::optional<SearchList> memoized_search_list(cache::Store* store, const std::string& key) {
  if (!store) return std::nullopt;
  std::optional<std::string> memo = store->get_memo("search", key);
  SearchList list;
  if (!memo || !decode_search_list(*memo, &list)) return std::nullopt;
  // A skipped dir that is now a directory would be searched: ask again. (A
  // plain file there is skipped as before.)
  for (const std::string& dir : list.missing_dirs) {
    if (base::is_directory(dir)) return std::nullopt;
  }
  // A dropped dir that is no longer the same directory as its listed one.
  if (!same_dirs_hold(list.same_dirs)) return std::nullopt;
  return list;
}

// Whether every dir where the compiler found GCC installations for this
// command (clang, under a --sysroot or --gcc-toolchain of the command's own)
// is one the identity watches: else a newer installation there would change
// the list unnoticed, so it is not remembered.
bool gcc_installations_watched(const CompilerIdentity& identity, std::string_view verbose_output) {
  for (const std::string& dir : gcc_installation_dirs(verbose_output)) {
    DirId id;
    if (!dir_id(dir, &id)) return false;
    bool watched = false;
    for (const auto& w : identity.watched_dirs) {
      watched = watched || (DirId{dev_t(w.second.dev), ino_t(w.second.ino)} == id);
    }
    if (!watched) return false;
  }
  return true;
}

// The compiler's answer for `args`, memoized. A base question whose probe
// the compiler dropped as a duplicate of another dir is an error, never kept.
base::Result<SearchList> ask(cache::Store* store, const CompilerIdentity& identity,
                             compiler::Language language, const std::vector<std::string>& args,
                             const std::string& cwd, bool probed) {
  std::string key = memo_key(identity, language, args, cwd);
  if (std::optional<SearchList> memo = memoized_search_list(store, key)) return *memo;
  std::vector<std::string> argv = {identity.program};
  argv.insert(argv.end(), args.begin(), args.end());
  for (const char* a : {"-x", "", "-E", "-v", "/dev/null", "-o", "/dev/null"}) argv.push_back(a);
  argv[args.size() + 2] = std::string(compiler::language_name(language));
  base::ProcessResult r = base::run_captured(argv, true);
  if (!r.started) return base::Status::error(r.error);
  SearchList list;
  if (r.exit_code != 0 || !parse_search_list(r.err, &list)) {
    return base::Status::error("cannot read the include search list from " + identity.program +
                               " -E -v (exit " + std::to_string(r.exit_code) + ")");
  }
  if (probed && probe_dropped(r.err)) {
    return base::Status::error(std::string(kProbeDir) + " is already in the search list");
  }
  list.memoizable =
      duplicates_only_by_spelling(list, r.err, args, identity.kind, &list.same_dirs) &&
      gcc_installations_watched(identity, r.err);
  if (store && list.memoizable) store->put_memo("search", key, encode_search_list(list));
  return list;
}

// The directory of an -isystem argument at search_args[*i] (the joined or
// the separate form) that derivation can place, moving *i past its value;
// nullopt when the argument is no such -isystem (clang's -isystem-after
// among them).
std::optional<std::string> system_dir_at(const std::vector<std::string>& search_args, size_t* i) {
  const std::string& arg = search_args[*i];
  std::string dir;
  size_t next = *i;
  if (arg == "-isystem") {
    if (*i + 1 >= search_args.size()) return std::nullopt;
    dir = search_args[++next];
  } else if (starts_with(arg, "-isystem/")) {
    dir = arg.substr(std::string_view("-isystem").size());
  } else {
    return std::nullopt;
  }
  if (dir.empty() || dir[0] != '/' || !plain_path(dir)) return std::nullopt;
  *i = next;
  return dir;
}

}  // namespace

bool split_include_dirs(const std::vector<std::string>& search_args, IncludeSplit* split) {
  split->include_dirs.clear();
  split->system_dirs.clear();
  split->rest.clear();
  bool next_is_free = true;  // the next argument is nobody's value
  for (size_t i = 0; i < search_args.size(); ++i) {
    const std::string& arg = search_args[i];
    for (std::string_view p : kRefusedPrefixes) {
      if (starts_with(arg, p)) return false;
    }
    if (starts_with(arg, "-I")) {
      if (!next_is_free) return false;
      std::string dir;
      if (arg == "-I") {
        if (i + 1 >= search_args.size()) return false;
        dir = search_args[++i];
      } else {
        dir = arg.substr(2);
      }
      if (!plain_path(dir)) return false;
      split->include_dirs.push_back(std::move(dir));
      next_is_free = true;
      continue;
    }
    if (next_is_free) {
      if (std::optional<std::string> dir = system_dir_at(search_args, &i)) {
        split->system_dirs.push_back(std::move(*dir));
        continue;
      }
    }
    split->rest.push_back(arg);
    // The value of such an option is never read as an -I flag.
    if (compiler::takes_separate_value(arg) && i + 1 < search_args.size()) {
      split->rest.push_back(search_args[++i]);
      next_is_free = true;
    } else {
      next_is_free = leaves_next_alone(arg);
    }
  }
  return true;
}

bool include_dirs_distinct(const std::vector<std::string>& include_dirs) {
  std::vector<DirId> seen;
  for (const std::string& dir : include_dirs) {
    DirId id;
    if (absent(dir)) continue;  // left out, as the compiler leaves it out
    if (!dir_id(dir, &id)) return false;
    for (const DirId& other : seen) {
      if (other == id) return false;
    }
    seen.push_back(id);
  }
  return true;
}

bool include_dirs_distinct(const IncludeSplit& split) {
  std::vector<std::string> all = split.include_dirs;
  all.insert(all.end(), split.system_dirs.begin(), split.system_dirs.end());
  return include_dirs_distinct(all);
}

bool search_path_environment_set() {
  for (const char* name : kSearchPathEnv) {
    if (std::getenv(name)) return true;
  }
  return false;
}

base::Result<SearchList> asked_search_list(cache::Store* store, const CompilerIdentity& identity,
                                           compiler::Language language,
                                           const std::vector<std::string>& args,
                                           const std::string& cwd) {
  return ask(store, identity, language, args, cwd, false);
}

base::Result<SearchList> probed_base_search_list(cache::Store* store,
                                                 const CompilerIdentity& identity,
                                                 compiler::Language language,
                                                 const std::vector<std::string>& rest,
                                                 const std::string& cwd) {
  return ask(store, identity, language, with_probe(rest), base_cwd(rest, cwd), true);
}

bool probe_dropped(std::string_view verbose_output) {
  std::string line = "ignoring duplicate directory \"" + std::string(kProbeDir) + "\"";
  return verbose_output.find(line) != std::string_view::npos;
}

void remember_bare_probed_list(cache::Store* store, const CompilerIdentity& identity,
                               compiler::Language language, const SearchList& probed) {
  if (!store || search_path_environment_set() || !probed.memoizable) return;
  store->put_memo("search", memo_key(identity, language, with_probe({}), base_cwd({}, "")),
                  encode_search_list(probed));
}

std::optional<std::vector<std::string>> shareable_base_rest(const CompileCommand& command) {
  IncludeSplit split;
  if (search_path_environment_set() || library_path_has_specs() ||
      !split_include_dirs(command.search_args, &split) || split.rest.empty()) {
    return std::nullopt;
  }
  // Code generation, language and warning flags: none names a file or
  // changes where the driver looks for its own (-B, -specs=, -fplugin=,
  // --sysroot, -no-canonical-prefixes and the like are left out; -Wp,
  // options and -iprefix split_include_dirs refuses).
  constexpr std::string_view kFlags[] = {"-f", "-m",        "-std=",    "-O",    "-g",
                                         "-W", "-nostdinc", "-pthread", "-ansi", "-pedantic"};
  for (const std::string& arg : split.rest) {
    bool known = false;
    for (std::string_view f : kFlags) known = known || starts_with(arg, f);
    if (!known || starts_with(arg, "-fplugin") || arg.find('/') != std::string::npos ||
        compiler::takes_separate_value(arg)) {
      return std::nullopt;
    }
  }
  return split.rest;
}

namespace {

// The store's memo key of `command`'s base question when its answer may
// travel (gcc, a shareable rest): the key probed_base_search_list asks under.
std::optional<std::string> shareable_base_key(const CompilerIdentity& identity,
                                              const CompileCommand& command,
                                              const std::string& cwd) {
  std::optional<std::vector<std::string>> rest = shareable_base_rest(command);
  if (!rest || identity.kind != CompilerKind::kGcc) return std::nullopt;
  return memo_key(identity, command.language, with_probe(*rest), base_cwd(*rest, cwd));
}

}  // namespace

std::optional<SearchList> shareable_base_answer(cache::Store* store,
                                                const CompilerIdentity& identity,
                                                const CompileCommand& command,
                                                const std::string& cwd) {
  std::optional<std::string> key = shareable_base_key(identity, command, cwd);
  return key ? memoized_search_list(store, *key) : std::nullopt;
}

bool remember_shared_base_answer(cache::Store* store, const CompilerIdentity& identity,
                                 const CompileCommand& command, const std::string& cwd,
                                 const SearchList& probed, std::string* why) {
  std::optional<std::string> key = shareable_base_key(identity, command, cwd);
  if (!store || !key || !probed.memoizable) {
    *why = "its search arguments' answer does not travel";
    return false;
  }
  if (memoized_search_list(store, *key)) return true;  // asked here already: kept
  if (std::string m = list_mismatch(probed); !m.empty()) {
    *why = m;
    return false;
  }
  store->put_memo("search", *key, encode_search_list(probed));
  return true;
}

bool strip_probe(const SearchList& probed, SearchList* base) {
  if (probed.bracket_dirs.empty() || probed.bracket_dirs[0] != kProbeDir) return false;
  *base = probed;
  base->bracket_dirs.erase(base->bracket_dirs.begin());
  // The probe must have displaced nothing: no other dir may be the same one.
  DirId probe;
  if (!dir_id(std::string(kProbeDir), &probe)) return false;
  for (const std::vector<std::string>* dirs : {&base->quote_dirs, &base->bracket_dirs}) {
    for (const std::string& dir : *dirs) {
      DirId id;
      if (!dir_id(dir, &id) || id == probe) return false;
    }
  }
  return true;
}

bool derive_search_list(const SearchList& base, const std::vector<std::string>& include_dirs,
                        const std::vector<std::string>& system_dirs, SearchList* derived,
                        std::string* why) {
  // Every dir of the result must be a directory no other one of them is: the
  // compiler would drop a duplicate.
  std::vector<DirId> seen;
  auto distinct_dir = [&](const std::string& dir, const std::string& what) {
    DirId id;
    if (!dir_id(dir, &id)) {
      *why = what + dir + " is not an existing directory";
      return false;
    }
    for (const DirId& other : seen) {
      if (other == id) {
        *why = what + dir + " is the same directory as another search dir";
        return false;
      }
    }
    seen.push_back(id);
    return true;
  };
  for (const std::vector<std::string>* dirs : {&base.quote_dirs, &base.bracket_dirs}) {
    for (const std::string& dir : *dirs) {
      if (!distinct_dir(dir, "search dir ")) return false;
    }
  }
  for (const std::string& dir : base.missing_dirs) {
    if (::access(dir.c_str(), F_OK) == 0) {
      *why = "search dir " + dir + " appeared";
      return false;
    }
  }
  // A dir that does not exist is dropped, and kept with the list as missing:
  // the list no longer holds once it appears.
  std::vector<std::string> listed, missing = base.missing_dirs;
  for (const auto& [dirs, what] : {std::pair{&include_dirs, "-I "}, {&system_dirs, "-isystem "}}) {
    for (const std::string& dir : *dirs) {
      if (absent(dir)) {
        missing.push_back(dir);
      } else if (!distinct_dir(dir, what)) {
        return false;
      } else {
        listed.push_back(dir);
      }
    }
  }
  derived->quote_dirs = base.quote_dirs;
  derived->bracket_dirs = std::move(listed);
  derived->bracket_dirs.insert(derived->bracket_dirs.end(), base.bracket_dirs.begin(),
                               base.bracket_dirs.end());
  derived->missing_dirs = std::move(missing);
  derived->same_dirs = base.same_dirs;
  derived->memoizable = base.memoizable;
  return true;
}

bool derived_search_list(cache::Store* store, const CompilerIdentity& identity,
                         const compiler::CompileCommand& command, const std::string& cwd,
                         SearchList* list, const BaseLookup* base_lookup) {
  IncludeSplit split;
  if (search_path_environment_set() || !split_include_dirs(command.search_args, &split) ||
      !include_dirs_distinct(split)) {
    return false;
  }
  base::Result<SearchList> probed =
      base_lookup ? (*base_lookup)(split.rest)
                  : probed_base_search_list(store, identity, command.language, split.rest, cwd);
  SearchList base;
  std::string why;
  return probed.ok() && strip_probe(*probed, &base) &&
         derive_search_list(base, split.include_dirs, split.system_dirs, list, &why);
}

base::Result<SearchList> search_list_for(cache::Store* store, const CompilerIdentity& identity,
                                         const compiler::CompileCommand& command,
                                         const std::string& cwd, const BaseLookup* base_lookup) {
  std::string key = memo_key(identity, command.language, command.search_args, cwd);
  if (std::optional<SearchList> memo = memoized_search_list(store, key)) return *memo;
  // Concurrent first compiles with these arguments ask the compiler once.
  std::optional<cache::ComputeOnce> once;
  if (store) {
    once.emplace(store->dir(), "search " + key);
    if (once->waited()) {
      if (std::optional<SearchList> memo = memoized_search_list(store, key)) return *memo;
    }
  }
  SearchList derived;
  if (derived_search_list(store, identity, command, cwd, &derived, base_lookup)) {
    if (store && derived.memoizable) store->put_memo("search", key, encode_search_list(derived));
    return derived;
  }
  return asked_search_list(store, identity, command.language, command.search_args, cwd);
}

}  // namespace lexpack::compiler
