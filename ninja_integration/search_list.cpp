// The search list comes from the compiler itself (-E -v), so -I/-isystem
// de-duplication, sysroots, multiarch dirs and CPATH are exactly its own
// (derived_search_list.cpp asks it, or derives where that is exact).
#include "ninja_integration/search_list.h"

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

}  // namespace

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
