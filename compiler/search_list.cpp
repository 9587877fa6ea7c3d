// The search list comes from the compiler itself (-E -v), so -I/-isystem
// de-duplication, sysroots, multiarch dirs and CPATH are exactly its own
// (derived_search_list.cpp asks it, or derives where that is exact).
#include "compiler/search_list.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "base/byte_codec.h"

namespace lexpack::compiler {
namespace {

constexpr std::string_view kSearchFormat = "lexpack-search-3";

constexpr const char* kRelevantEnv[] = {
    "CPATH",
    "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH",
    "OBJC_INCLUDE_PATH",
    "OBJCPLUS_INCLUDE_PATH",
    "SOURCE_DATE_EPOCH",
    "GCC_EXEC_PREFIX",
    "COMPILER_PATH",
    "CCC_OVERRIDE_OPTIONS",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "GCC_COLORS",
    "TERM",
    // What the diagnostics (replayed on a hit) hold: URLs, fix-it hints.
    "GCC_URLS",
    "TERM_URLS",
    "GCC_EXTRA_DIAGNOSTIC_OUTPUT",
    // -fcompare-debug: the compile runs twice and fails on a difference.
    "GCC_COMPARE_DEBUG",
    // Side outputs (refused_by_compiler() makes such compiles uncacheable;
    // kept here so that no memo made without them answers one with them).
    "DEPENDENCIES_OUTPUT",
    "SUNPRO_DEPENDENCIES",
    "CC_PRINT_OPTIONS",
    "CC_PRINT_HEADERS",
    "CC_LOG_DIAGNOSTICS",
};

void write_list(base::VarintWriter* w, const std::vector<std::string>& v) {
  w->u64(v.size());
  for (const std::string& s : v) w->str(s);
}

bool read_list(base::VarintReader* r, std::vector<std::string>* v) {
  uint64_t n = 0;
  if (!r->u64(&n) || n > (1u << 20)) return false;
  v->resize(n);
  for (std::string& s : *v) {
    if (!r->str(&s)) return false;
  }
  return true;
}

// The path made absolute from `cwd` with empty and "." components taken out
// ("./a//b/./" -> "<cwd>/a/b"): two spellings with the same key name the same
// path for as long as the working directory stays (it is part of every memo
// key). ".." is kept: a symlink may come before it.
std::string spelling_key(std::string_view path, std::string_view cwd) {
  std::string joined = path.empty() || path[0] != '/' ? std::string(cwd) + "/" : std::string();
  joined += path;
  std::string out;
  size_t start = 0;
  while (start <= joined.size()) {
    size_t end = joined.find('/', start);
    if (end == std::string::npos) end = joined.size();
    std::string_view part = std::string_view(joined).substr(start, end - start);
    if (!part.empty() && part != ".") {
      out += '/';
      out += part;
    }
    start = end + 1;
  }
  return out.empty() ? "/" : out;
}

// The dirs given by -I, -isystem, -iquote, -idirafter and the like in
// `args`, joined or separate; false when an option builds a dir from pieces
// (-iwithprefix, -iwithsysroot) or names framework dirs, whose spellings in
// the list cannot be matched.
bool dir_arguments(const std::vector<std::string>& args, std::vector<std::string_view>* dirs) {
  // Longest first where one is a prefix of another.
  constexpr std::string_view kDirOptions[] = {"--include-directory-after=",
                                              "--include-directory=",
                                              "-internal-externc-isystem",
                                              "-internal-isystem",
                                              "-objcxx-isystem",
                                              "-objc-isystem",
                                              "-cxx-isystem",
                                              "-c-isystem",
                                              "-idirafter",
                                              "-isystem",
                                              "-iquote",
                                              "-I"};
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg.substr(0, 6) == "-iwith" || arg.substr(0, 11) == "-iframework" ||
        arg.substr(0, 2) == "-F") {
      return false;
    }
    if (arg == "-I-") continue;
    for (std::string_view opt : kDirOptions) {
      if (arg.substr(0, opt.size()) != opt) continue;
      if (arg.size() > opt.size()) {
        dirs->push_back(arg.substr(opt.size()));
      } else if (opt.back() != '=' && i + 1 < args.size()) {
        dirs->push_back(args[++i]);
      }
      break;
    }
  }
  return true;
}

// The arguments of the cc1 command clang prints with -v (space separated,
// quoted with backslash escapes where needed); false when there is none.
bool clang_cc1_arguments(std::string_view verbose_output, std::vector<std::string>* args) {
  while (!verbose_output.empty()) {
    std::string_view line = take_line(&verbose_output);
    if (line.empty() || line[0] != ' ' || line.find(" -cc1 ") == std::string_view::npos) continue;
    std::string token;
    bool in_token = false, quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted) {
        if (c == '\\' && i + 1 < line.size()) {
          token += line[++i];
        } else if (c == '"') {
          quoted = false;
        } else {
          token += c;
        }
      } else if (c == ' ') {
        if (in_token) args->push_back(std::move(token));
        token.clear();
        in_token = false;
      } else {
        in_token = true;
        if (c == '"') {
          quoted = true;
        } else {
          token += c;
        }
      }
    }
    if (in_token) args->push_back(std::move(token));
    return true;
  }
  return false;
}

// The directory `path` names (following symlinks), when it is one.
bool dir_identity(const std::string& path, std::pair<dev_t, ino_t>* id) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  *id = {st.st_dev, st.st_ino};
  return true;
}

}  // namespace

bool same_dirs_hold(const std::vector<SearchList::SameDir>& same_dirs) {
  for (const SearchList::SameDir& s : same_dirs) {
    std::pair<dev_t, ino_t> dropped, kept;
    if (!dir_identity(s.dropped, &dropped) || !dir_identity(s.kept, &kept) || dropped != kept) {
      return false;
    }
  }
  return true;
}

namespace {

// For gcc, which names each dir it drops: each reported dir not listed by
// spelling that is the same directory as a listed one, paired with it.
// False when one is not.
bool pair_dropped_dirs(const SearchList& list, const std::vector<std::string_view>& dropped,
                       std::vector<SearchList::SameDir>* same_dirs) {
  std::vector<std::pair<std::pair<dev_t, ino_t>, const std::string*>> listed;
  for (const std::vector<std::string>* dirs : {&list.quote_dirs, &list.bracket_dirs}) {
    for (const std::string& d : *dirs) {
      std::pair<dev_t, ino_t> id;
      if (dir_identity(d, &id)) listed.push_back({id, &d});
    }
  }
  for (std::string_view d : dropped) {
    std::pair<dev_t, ino_t> id;
    if (!dir_identity(std::string(d), &id)) return false;
    auto it =
        std::find_if(listed.begin(), listed.end(), [&](const auto& l) { return l.first == id; });
    if (it == listed.end()) return false;
    same_dirs->push_back({std::string(d), *it->second});
  }
  return true;
}

}  // namespace

bool duplicates_only_by_spelling(const SearchList& list, std::string_view verbose_output,
                                 const std::vector<std::string>& args, CompilerKind kind,
                                 std::vector<SearchList::SameDir>* same_dirs) {
  char cwd_buf[PATH_MAX];
  const std::string cwd = ::getcwd(cwd_buf, sizeof cwd_buf) ? cwd_buf : "";
  std::vector<std::string> known;
  for (const std::vector<std::string>* dirs :
       {&list.quote_dirs, &list.bracket_dirs, &list.missing_dirs}) {
    for (const std::string& d : *dirs) known.push_back(spelling_key(d, cwd));
  }
  auto listed = [&](std::string_view dir) {
    return std::find(known.begin(), known.end(), spelling_key(dir, cwd)) != known.end();
  };
  auto all_listed = [&](const std::vector<std::string>& given) {
    std::vector<std::string_view> dirs;
    return dir_arguments(given, &dirs) && std::all_of(dirs.begin(), dirs.end(), listed);
  };
  constexpr std::string_view kDuplicate = "ignoring duplicate directory \"";
  std::vector<std::string_view> reported;
  for (std::string_view rest = verbose_output; !rest.empty();) {
    std::string_view line = take_line(&rest);
    if (line.substr(0, kDuplicate.size()) != kDuplicate || line.back() != '"') continue;
    reported.push_back(line.substr(kDuplicate.size(), line.size() - kDuplicate.size() - 1));
  }
  // Both compilers report each dir they drop as a duplicate.
  if (reported.empty()) return true;
  if (kind == CompilerKind::kGcc && same_dirs) {
    // gcc names each dir it dropped: those listed by another spelling are
    // harmless, the others are each paired with the directory they are.
    std::vector<std::string_view> unlisted;
    for (std::string_view d : reported) {
      if (!listed(d)) unlisted.push_back(d);
    }
    std::vector<SearchList::SameDir> pairs;
    if (!pair_dropped_dirs(list, unlisted, &pairs)) return false;
    same_dirs->insert(same_dirs->end(), pairs.begin(), pairs.end());
    return true;
  }
  // A dir of the command's own that is not listed was dropped under a name
  // of its own.
  if (!all_listed(args) || !std::all_of(reported.begin(), reported.end(), listed)) return false;
  // gcc names each dir it dropped: all are listed, so all are harmless.
  if (kind == CompilerKind::kGcc) return true;
  // clang may name the dir it kept. Its cc1 command holds every dir it was
  // given (the command's, CPATH-like variables', its builtin ones for Linux
  // targets): each must be listed by some spelling, or one was dropped under
  // a name of its own. And each listed or missing dir must be on it: for
  // other targets cc1 adds default dirs of its own, whose drops go unseen.
  std::vector<std::string> cc1;
  std::vector<std::string_view> cc1_dirs;
  if (!clang_cc1_arguments(verbose_output, &cc1) || !dir_arguments(cc1, &cc1_dirs)) return false;
  std::vector<std::string> given;
  for (std::string_view d : cc1_dirs) given.push_back(spelling_key(d, cwd));
  auto on_cc1_line = [&](const std::string& key) {
    return std::find(given.begin(), given.end(), key) != given.end();
  };
  return std::all_of(cc1_dirs.begin(), cc1_dirs.end(), listed) &&
         std::all_of(known.begin(), known.end(), on_cc1_line);
}

std::string_view take_line(std::string_view* text) {
  const size_t nl = text->find('\n');
  std::string_view line = text->substr(0, nl);
  *text = nl == std::string_view::npos ? std::string_view() : text->substr(nl + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

std::vector<std::string> gcc_installation_dirs(std::string_view verbose_output) {
  constexpr std::string_view kFound = "Found candidate GCC installation: ";
  std::vector<std::string> dirs;
  auto add = [&](std::string_view dir) {
    if (dir.empty() || dir == "/") return;
    for (const std::string& d : dirs) {
      if (d == dir) return;
    }
    dirs.emplace_back(dir);
  };
  while (!verbose_output.empty()) {
    std::string_view line = take_line(&verbose_output);
    if (line.substr(0, kFound.size()) != kFound) continue;
    std::string_view install = line.substr(kFound.size());
    size_t slash = install.rfind('/');
    if (slash == std::string_view::npos || slash == 0) continue;
    std::string_view triple_dir = install.substr(0, slash);  // .../gcc/<triple>
    add(triple_dir);
    slash = triple_dir.rfind('/');
    if (slash != std::string_view::npos && slash > 0) add(triple_dir.substr(0, slash));
  }
  return dirs;
}

bool parse_search_list(std::string_view text, SearchList* list) {
  enum { kBefore, kQuote, kBracket, kDone } state = kBefore;
  while (!text.empty()) {
    std::string_view line = take_line(&text);
    constexpr std::string_view kMissing = "ignoring nonexistent directory \"";
    // gcc: "cc1plus: warning: X: not a directory" (clang calls it nonexistent).
    constexpr std::string_view kWarning = ": warning: ";
    constexpr std::string_view kNotDir = ": not a directory";
    size_t warning = line.find(kWarning);
    if (line.substr(0, kMissing.size()) == kMissing && line.back() == '"') {
      list->missing_dirs.emplace_back(
          line.substr(kMissing.size(), line.size() - kMissing.size() - 1));
    } else if (state == kBefore && warning != std::string_view::npos &&
               line.size() > warning + kWarning.size() + kNotDir.size() &&
               line.substr(line.size() - kNotDir.size()) == kNotDir) {
      size_t start = warning + kWarning.size();
      list->missing_dirs.emplace_back(line.substr(start, line.size() - kNotDir.size() - start));
    } else if (line == "#include \"...\" search starts here:") {
      state = kQuote;
    } else if (line == "#include <...> search starts here:") {
      state = kBracket;
    } else if (line == "End of search list.") {
      state = kDone;
    } else if ((state == kQuote || state == kBracket) && !line.empty() && line[0] == ' ') {
      std::string_view dir = line.substr(1);
      constexpr std::string_view kFramework = " (framework directory)";
      if (dir.size() > kFramework.size() &&
          dir.substr(dir.size() - kFramework.size()) == kFramework) {
        continue;  // frameworks are not searched by name/header layout
      }
      (state == kQuote ? list->quote_dirs : list->bracket_dirs).emplace_back(dir);
    }
  }
  return state == kDone;
}

std::string encode_search_list(const SearchList& list) {
  base::VarintWriter w;
  w.str(kSearchFormat);
  write_list(&w, list.quote_dirs);
  write_list(&w, list.bracket_dirs);
  write_list(&w, list.missing_dirs);
  w.u64(list.same_dirs.size());
  for (const SearchList::SameDir& d : list.same_dirs) {
    w.str(d.dropped);
    w.str(d.kept);
  }
  return w.take();
}

bool decode_search_list(std::string_view bytes, SearchList* list) {
  base::VarintReader r(bytes);
  std::string tag;
  uint64_t n = 0;
  if (!r.str(&tag) || tag != kSearchFormat || !read_list(&r, &list->quote_dirs) ||
      !read_list(&r, &list->bracket_dirs) || !read_list(&r, &list->missing_dirs) || !r.u64(&n) ||
      n > bytes.size()) {
    return false;
  }
  list->same_dirs.resize(n);
  for (SearchList::SameDir& d : list->same_dirs) {
    if (!r.str(&d.dropped) || !r.str(&d.kept)) return false;
  }
  return r.done();
}

std::string relevant_environment() {
  std::string out;
  for (const char* name : kRelevantEnv) {
    if (const char* v = std::getenv(name)) {
      out += name;
      out += '=';
      out += v;
      out += '\n';
    }
  }
  return out;
}

}  // namespace lexpack::compiler
