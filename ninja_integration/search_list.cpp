// The search list comes from the compiler itself (-E -v), so -I/-isystem
// de-duplication, sysroots, multiarch dirs and CPATH are exactly its own
// (derived_search_list.cpp asks it, or derives where that is exact).
#include "ninja_integration/search_list.h"

#include <climits>
#include <cstdlib>

#include "ninja_integration/byte_codec.h"
#include "ninja_integration/derived_search_list.h"

namespace lexpack::ninja {
namespace {

constexpr std::string_view kSearchFormat = "lexpack-search-1";

constexpr const char* kRelevantEnv[] = {
    "CPATH",
    "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH",
    "OBJC_INCLUDE_PATH",
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
};

void write_list(ByteWriter* w, const std::vector<std::string>& v) {
  w->u64(v.size());
  for (const std::string& s : v) w->str(s);
}

bool read_list(ByteReader* r, std::vector<std::string>* v) {
  uint64_t n = 0;
  if (!r->u64(&n) || n > (1u << 20)) return false;
  v->resize(n);
  for (std::string& s : *v) {
    if (!r->str(&s)) return false;
  }
  return true;
}

// The same path with "./" prefixes, empty and "." components and a trailing
// '/' taken out ("./a//b/./" -> "a/b"); ".." is kept (a symlink may come
// before it).
std::string spelling_key(std::string_view path) {
  const bool absolute = !path.empty() && path[0] == '/';
  std::string out = absolute ? "/" : "";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (!part.empty() && part != ".") {
      if (!out.empty() && out.back() != '/') out += '/';
      out += part;
    }
    start = end + 1;
  }
  return out.empty() ? "." : out;
}

// The dirs `args` gives by -I, -isystem, -iquote, -idirafter (joined or
// separate). False when an option builds a dir from pieces (-iprefix with
// -iwithprefix, -iwithsysroot): its spelling in the list is not in `args`.
bool include_arg_dirs(const std::vector<std::string>& args, std::vector<std::string_view>* dirs) {
  constexpr std::string_view kDirOptions[] = {"--include-directory-after=",
                                              "--include-directory=",
                                              "-cxx-isystem",
                                              "-idirafter",
                                              "-isystem",
                                              "-iquote",
                                              "-I"};
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg.substr(0, 6) == "-iwith") return false;
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

// True when `dir` names a directory through no symlink: its real path is its
// own spelling made absolute (relative paths from the working directory).
// clang reports a dir that duplicates a system dir by the name it kept, which
// may be the symlink that replaced the system dir's own spelling.
bool named_without_symlink(std::string_view dir) {
  std::string path(dir);
  char real[PATH_MAX];
  if (!::realpath(path.c_str(), real)) return false;
  std::string lexical = spelling_key(dir);
  if (lexical[0] != '/') {
    char cwd[PATH_MAX];
    if (!::realpath(".", cwd)) return false;
    lexical = lexical == "." ? std::string(cwd) : std::string(cwd) + "/" + lexical;
    if (lexical.substr(0, 2) == "//") lexical.erase(0, 1);
  }
  return lexical == real;
}

}  // namespace

bool duplicates_only_by_spelling(const SearchList& list, std::string_view verbose_output,
                                 const std::vector<std::string>& args) {
  std::vector<std::string> known;
  for (const std::vector<std::string>* dirs :
       {&list.quote_dirs, &list.bracket_dirs, &list.missing_dirs}) {
    for (const std::string& d : *dirs) known.push_back(spelling_key(d));
  }
  auto listed = [&](std::string_view dir) {
    const std::string key = spelling_key(dir);
    for (const std::string& k : known) {
      if (k == key) return true;
    }
    return false;
  };
  // gcc names the dropped dir, clang (for a symlink) the one it kept: the
  // message catches the first, the command's own dirs the second.
  constexpr std::string_view kDuplicate = "ignoring duplicate directory \"";
  bool any_duplicate = false;
  while (!verbose_output.empty()) {
    size_t nl = verbose_output.find('\n');
    std::string_view line = verbose_output.substr(0, nl);
    verbose_output =
        nl == std::string_view::npos ? std::string_view() : verbose_output.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, kDuplicate.size()) != kDuplicate || line.back() != '"') continue;
    any_duplicate = true;
    std::string_view dir = line.substr(kDuplicate.size(), line.size() - kDuplicate.size() - 1);
    if (!listed(dir) || !named_without_symlink(dir)) return false;
  }
  std::vector<std::string_view> dirs;
  if (!include_arg_dirs(args, &dirs)) return !any_duplicate;
  for (std::string_view d : dirs) {
    if (!listed(d)) return false;
  }
  return true;
}

bool parse_search_list(std::string_view text, SearchList* list) {
  enum { kBefore, kQuote, kBracket, kDone } state = kBefore;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
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
  ByteWriter w;
  w.str(kSearchFormat);
  write_list(&w, list.quote_dirs);
  write_list(&w, list.bracket_dirs);
  write_list(&w, list.missing_dirs);
  return w.take();
}

bool decode_search_list(std::string_view bytes, SearchList* list) {
  ByteReader r(bytes);
  std::string tag;
  return r.str(&tag) && tag == kSearchFormat && read_list(&r, &list->quote_dirs) &&
         read_list(&r, &list->bracket_dirs) && read_list(&r, &list->missing_dirs) && r.done();
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

cache::Result<SearchList> query_search_list(cache::Store* store, const CompilerIdentity& identity,
                                            const CompileCommand& command, const std::string& cwd) {
  return search_list_for(store, identity, command, cwd);
}

}  // namespace lexpack::ninja
