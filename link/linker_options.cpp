// The linker words of a link, read as GNU ld reads them: @files expanded
// first (anywhere, as libiberty's expandargv does), then long options matched
// by any unambiguous prefix, with one or two dashes (getopt_long_only).
#include "link/linker_options.h"

#include <array>

#include "base/file_stat.h"
#include "base/file_util.h"
#include "link/link_step.h"

namespace lexpack::link {
namespace {

// kBad: the link is not cached. kFile: its argument is a file ld reads that
// its dependency file leaves out. kDirs: a ':'-separated list of directories
// searched for needed libraries. kLibDir: a -L directory. kScript: a linker
// script (read and listed by ld; it can name files to look for).
// kJustSymbols: a file (listed) or, for a directory, an rpath. kOther: an
// argument that names no file lexpack must add (-l: listed when found).
enum class Kind { kBad, kFile, kDirs, kLibDir, kScript, kJustSymbols, kOther };

struct LongOption {
  std::string_view name;
  Kind kind;
  bool takes_argument;
};

constexpr std::array<LongOption, 26> kLongOptions = {{
    {"plugin", Kind::kBad, true},
    {"plugin-opt", Kind::kBad, true},
    {"Map", Kind::kBad, true},
    {"dependency-file", Kind::kBad, true},
    {"trace", Kind::kBad, false},
    {"out-implib", Kind::kBad, true},
    {"print-map", Kind::kBad, false},
    {"verbose", Kind::kBad, false},
    {"relocatable", Kind::kBad, false},
    {"Ur", Kind::kBad, false},
    {"trace-symbol", Kind::kBad, true},
    {"version", Kind::kBad, false},
    {"output", Kind::kBad, true},
    {"sysroot", Kind::kBad, true},
    {"mri-script", Kind::kBad, true},
    {"retain-symbols-file", Kind::kFile, true},
    {"section-ordering-file", Kind::kFile, true},
    {"symbol-ordering-file", Kind::kFile, true},
    {"rpath", Kind::kDirs, true},
    {"rpath-link", Kind::kDirs, true},
    {"library-path", Kind::kLibDir, true},
    {"script", Kind::kScript, true},
    {"default-script", Kind::kScript, true},
    {"dT", Kind::kScript, true},
    {"just-symbols", Kind::kJustSymbols, true},
    {"library", Kind::kOther, true},
}};

struct ShortOption {
  char name;
  Kind kind;
  bool takes_argument;
};

// -m (another emulation: other SEARCH_DIRs), -M (map), -t (trace), -r
// (relocatable), -y (trace a symbol), -c (MRI script), -Y (default search
// path), -o (another output) are refused.
constexpr std::array<ShortOption, 11> kShortOptions = {{
    {'m', Kind::kBad, true},
    {'M', Kind::kBad, false},
    {'t', Kind::kBad, false},
    {'r', Kind::kBad, false},
    {'y', Kind::kBad, true},
    {'c', Kind::kBad, true},
    {'Y', Kind::kBad, true},
    {'o', Kind::kBad, true},
    {'L', Kind::kLibDir, true},
    {'T', Kind::kScript, true},
    {'R', Kind::kJustSymbols, true},
}};

constexpr int kMaxResponseFiles = 64;

// The long option `name` means: itself, or the only one it begins (any
// refused one among several is taken, so that an ambiguous prefix is never
// read as harmless). Null when none.
const LongOption* find_long(std::string_view name) {
  for (const LongOption& o : kLongOptions) {
    if (o.name == name) return &o;
  }
  if (name.size() < 2) return nullptr;
  const LongOption* found = nullptr;
  for (const LongOption& o : kLongOptions) {
    if (o.name.substr(0, name.size()) != name) continue;
    if (o.kind == Kind::kBad) return &o;
    if (!found) found = &o;
  }
  return found;
}

const ShortOption* find_short(char c) {
  for (const ShortOption& o : kShortOptions) {
    if (o.name == c) return &o;
  }
  return nullptr;
}

}  // namespace

void LinkerOptionReader::add(std::string_view word) {
  if (!result_.uncacheable.empty()) return;
  // ld expands @files before it reads any option, arguments included.
  if (word.size() > 1 && word[0] == '@') {
    add_response_file(word.substr(1));
    return;
  }
  if (!pending_.empty()) {
    std::string option = std::move(pending_);
    pending_.clear();
    take_argument(option, word);
    return;
  }
  // An input file (listed in the dependency file when read), or "-".
  if (word.size() < 2 || word[0] != '-') return;
  bool two_dashes = word[1] == '-';
  std::string_view body = word.substr(two_dashes ? 2 : 1);
  size_t eq = body.find('=');
  std::string_view name = body.substr(0, eq);
  if (const LongOption* o = find_long(name)) {
    if (o->kind == Kind::kBad) {
      result_.uncacheable = "linker option " + std::string(word);
    } else if (eq != std::string_view::npos) {
      take_argument(o->name, body.substr(eq + 1));
    } else if (o->takes_argument) {
      pending_ = std::string(o->name);
    }
    return;
  }
  if (two_dashes || body.empty()) return;
  // A short option, its argument joined (-Ldir) or in the next word.
  const ShortOption* s = find_short(body[0]);
  if (!s) return;
  if (s->kind == Kind::kBad) {
    result_.uncacheable = "linker option " + std::string(word);
  } else if (body.size() > 1) {
    take_argument(std::string_view(&s->name, 1), body.substr(1));
  } else if (s->takes_argument) {
    pending_ = std::string(1, s->name);
  }
}

void LinkerOptionReader::take_argument(std::string_view option, std::string_view value) {
  const LongOption* lo = option.size() > 1 ? find_long(option) : nullptr;
  const ShortOption* so = option.size() == 1 ? find_short(option[0]) : nullptr;
  Kind kind = lo ? lo->kind : so ? so->kind : Kind::kBad;
  switch (kind) {
    case Kind::kBad:
      result_.uncacheable = "linker option " + std::string(option);
      break;
    case Kind::kFile:
      result_.files.emplace_back(value);
      break;
    case Kind::kDirs:
      while (!value.empty()) {
        size_t colon = value.find(':');
        if (colon != 0) result_.search_dirs.emplace_back(value.substr(0, colon));
        if (colon == std::string_view::npos) break;
        value.remove_prefix(colon + 1);
      }
      break;
    case Kind::kLibDir:
      // "=dir" and "$SYSROOT" name the sysroot: not followed.
      if (value.empty() || value[0] == '=' || value.starts_with("$SYSROOT")) {
        result_.uncacheable = "linker search directory " + std::string(value);
      } else {
        result_.search_dirs.emplace_back(value);
      }
      break;
    case Kind::kScript:
      result_.has_script = true;
      break;
    case Kind::kJustSymbols: {
      // ld reads a file (listed); a directory is an rpath.
      base::StatSignature sig;
      bool is_dir = false;
      base::stat_file(std::string(value), &sig, &is_dir);
      if (is_dir) {
        result_.search_dirs.emplace_back(value);
      }
      break;
    }
    case Kind::kOther:
      break;
  }
}

void LinkerOptionReader::add_response_file(std::string_view path) {
  std::string file(path);
  if (++response_files_ > kMaxResponseFiles) {
    result_.uncacheable = "more than " + std::to_string(kMaxResponseFiles) + " linker @files";
    return;
  }
  base::Result<std::string> text = base::read_file(file);
  if (!text.ok()) {
    // ld would take the word as it is; not followed.
    result_.uncacheable = "linker response file @" + file + " unreadable";
    return;
  }
  result_.files.push_back(file);
  for (const std::string& w : split_response_file(*text)) {
    add(w);
    if (!result_.uncacheable.empty()) return;
  }
}

}  // namespace lexpack::link
