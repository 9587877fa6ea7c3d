// GNU ld and lld write into an output only these paths from the command line:
// rpath/runpath (-rpath, -R, LD_RUN_PATH), the soname (-soname, -h), the
// interpreter (-dynamic-linker, -I), filters and audit libraries, and a
// shared library input named by its path when it has no soname (DT_NEEDED).
// Archives hold member names without directories (ar's P and T modes are not
// cached at all). Everything else reaches an output only through the
// contents of the files read, which the key hashes.
#include "link/link_relocation.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <utility>

#include "base/relocation.h"

namespace lexpack::link {
namespace {

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

// A part of one argument that names a path the key may rename.
struct Span {
  size_t arg;
  size_t offset;
  size_t size;
};

// Linker options (their name without dashes) whose value only says where to
// look or what to read: relocatable.
constexpr std::array<std::string_view, 9> kReadValue = {
    "L",  "library-path",   "rpath-link",     "T",           "script",
    "dT", "default-script", "version-script", "dynamic-list"};
// Linker options whose value the output records.
constexpr std::array<std::string_view, 14> kRecordedValue = {
    "rpath",     "R", "soname", "h",     "dynamic-linker", "I", "f",
    "auxiliary", "F", "filter", "audit", "depaudit",       "P", "Y"};
// Other linker options taking a separate value.
constexpr std::array<std::string_view, 20> kOtherValue = {
    "l", "library",      "e",       "entry", "u", "undefined",    "z", "m",      "o",      "output",
    "y", "trace-symbol", "sysroot", "a",     "A", "architecture", "b", "format", "defsym", "c"};

template <size_t N>
bool among(std::string_view name, const std::array<std::string_view, N>& list) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

bool names(std::string_view text, std::string_view base_dir) {
  return text.find(base_dir) != std::string_view::npos;
}

// True when `path` is an ELF shared object (e_type ET_DYN).
bool is_shared_object(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  unsigned char h[18] = {};
  ssize_t n = ::pread(fd, h, sizeof h, 0);
  ::close(fd);
  if (n != ssize_t(sizeof h) || h[0] != 0x7f || h[1] != 'E' || h[2] != 'L' || h[3] != 'F') {
    return false;
  }
  unsigned type = h[5] == 2 ? (unsigned(h[16]) << 8) | h[17] : (unsigned(h[17]) << 8) | h[16];
  return type == 3;
}

// Walks a step's arguments: each renameable path value goes to `spans`; the
// first argument that names base_dir otherwise is the blocker returned.
class Visitor {
 public:
  Visitor(const LinkStep& step, std::string_view base_dir) : step_(step), base_dir_(base_dir) {}

  std::string run(std::vector<Span>* spans) {
    spans_ = spans;
    const std::vector<std::string>& a = step_.args;
    if (step_.kind == StepKind::kArchive) {
      if (!a.empty() && names(a[0], base_dir_)) block("the ar operation " + a[0]);
      for (size_t i = 1; i < a.size(); ++i) add(i, 0, a[i].size());
    } else if (step_.kind == StepKind::kRanlib) {
      for (size_t i = 0; i < a.size(); ++i) {
        if (!a[i].empty() && a[i][0] != '-') add(i, 0, a[i].size());
      }
    } else if (step_.kind == StepKind::kLink) {
      driver_args();
      if (!pending_.empty()) block("the linker option " + pending_ + " without its value");
    }
    return blocker_;
  }

 private:
  void add(size_t arg, size_t offset, size_t size) { spans_->push_back({arg, offset, size}); }
  void block(const std::string& why) {
    if (blocker_.empty()) blocker_ = why;
  }

  void driver_args() {
    const std::vector<std::string>& a = step_.args;
    for (size_t i = 0; i < a.size(); ++i) {
      std::string_view s = a[i];
      if (!pending_.empty() && s != "-Xlinker" && !starts_with(s, "-Wl,")) {
        // The driver passes its words in order: this one is the value.
        linker_value(std::exchange(pending_, std::string()), i, 0, s);
        continue;
      }
      if (starts_with(s, "-Wl,")) {
        size_t pos = 4;
        while (pos <= s.size()) {
          size_t comma = s.find(',', pos);
          if (comma == std::string_view::npos) comma = s.size();
          linker_word(i, pos, s.substr(pos, comma - pos));
          pos = comma + 1;
        }
      } else if (s == "-Xlinker" && i + 1 < a.size()) {
        ++i;
        linker_word(i, 0, a[i]);
      } else if ((s == "-o" || s == "-L" || s == "-T") && i + 1 < a.size()) {
        ++i;
        add(i, 0, a[i].size());
      } else if (s.size() > 2 && (starts_with(s, "-L") || starts_with(s, "-T"))) {
        add(i, 2, s.size() - 2);
      } else if (driver_option_takes_argument(s) && i + 1 < a.size()) {
        ++i;
        if (names(a[i], base_dir_)) block("the argument " + std::string(s) + " " + a[i]);
      } else if (!s.empty() && s[0] != '-') {
        input(i, s);
      } else if (size_t at = prefix_map_value(s); at != 0) {
        prefix_map(i, at, s.substr(at));
      } else if (names(s, base_dir_)) {
        block("the argument " + std::string(s) + " names a path under base_dir");
      }
    }
  }

  // Where OLD=NEW starts in -ffile-prefix-map=OLD=NEW and its kin, or 0.
  static size_t prefix_map_value(std::string_view s) {
    for (std::string_view flag : {"-ffile-prefix-map=", "-fdebug-prefix-map=",
                                  "-fmacro-prefix-map=", "-fprofile-prefix-map="}) {
      if (starts_with(s, flag)) return flag.size();
    }
    return 0;
  }

  // A prefix map is read by the compiler alone, and a step that compiles a
  // source is not cached (link_step.cpp): it reaches no output. CMake copies
  // CMAKE_<LANG>_FLAGS onto its link lines, prefix maps of the checkout
  // included. OLD is renamed like a path; a NEW naming base_dir is not
  // understood.
  void prefix_map(size_t i, size_t at, std::string_view value) {
    size_t eq = value.find('=');
    std::string_view old = value.substr(0, eq);
    std::string_view now = eq == std::string_view::npos ? std::string_view() : value.substr(eq + 1);
    if (names(now, base_dir_) || (names(old, base_dir_) && !base::path_is_under(old, base_dir_))) {
      block("the argument " + step_.args[i] + " names a path under base_dir");
      return;
    }
    if (!old.empty() && base::path_is_under(old, base_dir_)) add(i, at, old.size());
  }

  void input(size_t i, std::string_view s) {
    if (!base::path_is_under(s, base_dir_)) {
      if (names(s, base_dir_)) block("the input " + std::string(s) + " names base_dir");
      return;
    }
    // Without a soname the library's DT_NEEDED entry is the path as given.
    if (is_shared_object(std::string(s))) {
      block("the shared library " + std::string(s) +
            " is named by its path (DT_NEEDED may record it)");
      return;
    }
    add(i, 0, s.size());
  }

  void linker_word(size_t i, size_t offset, std::string_view word) {
    if (!pending_.empty()) {
      linker_value(std::exchange(pending_, std::string()), i, offset, word);
      return;
    }
    if (word.size() < 2 || word[0] != '-') {
      // An input handed to the linker directly, or a value of an option not
      // known here: not renamed.
      if (names(word, base_dir_)) {
        block("the linker argument " + std::string(word) + " names a path under base_dir");
      }
      return;
    }
    size_t dashes = word[1] == '-' ? 2 : 1;
    std::string_view bare = word.substr(dashes);
    size_t eq = bare.find('=');
    if (eq == std::string_view::npos &&
        (among(bare, kReadValue) || among(bare, kRecordedValue) || among(bare, kOtherValue))) {
      pending_ = std::string(bare);
      return;
    }
    if (eq != std::string_view::npos) {
      linker_value(std::string(bare.substr(0, eq)), i, offset + dashes + eq + 1,
                   bare.substr(eq + 1));
      return;
    }
    if (dashes == 1 && bare.size() > 1) {
      // A one-letter option joined to its value: -L/dir, -Tscript, -R/dir.
      std::string letter(1, bare[0]);
      if (among(letter, kReadValue) || among(letter, kRecordedValue) ||
          among(letter, kOtherValue)) {
        linker_value(letter, i, offset + 2, bare.substr(1));
        return;
      }
    }
    if (names(word, base_dir_)) {
      block("the linker option " + std::string(word) + " names a path under base_dir");
    }
  }

  void linker_value(const std::string& option, size_t i, size_t offset, std::string_view value) {
    if (among(std::string_view(option), kReadValue)) {
      // -rpath-link takes a colon separated list; each part is a path.
      size_t pos = 0;
      while (pos <= value.size()) {
        size_t end = option == "rpath-link" ? value.find(':', pos) : std::string_view::npos;
        if (end == std::string_view::npos) end = value.size();
        if (end > pos) add(i, offset + pos, end - pos);
        pos = end + 1;
      }
      return;
    }
    if (!names(value, base_dir_)) return;
    if (among(std::string_view(option), kRecordedValue)) {
      std::string hint = option == "rpath" || option == "R"
                             ? " (CMake writes $ORIGIN with CMAKE_BUILD_RPATH_USE_ORIGIN=ON)"
                             : "";
      block("the linker writes -" + option + " " + std::string(value) + " into the output" + hint);
    } else {
      block("the linker option -" + option + " " + std::string(value) +
            " names a path under base_dir");
    }
  }

  const LinkStep& step_;
  std::string_view base_dir_;
  std::vector<Span>* spans_ = nullptr;
  std::string pending_;  // a linker option waiting for its value
  std::string blocker_;
};

}  // namespace

closure::KeyRelocation decide_link_relocation(const LinkStep& step, const std::string& cwd,
                                              std::string_view base_dir) {
  closure::KeyRelocation r;
  r.base_dir = std::string(base_dir);
  r.cwd = cwd;
  if (base_dir.empty()) return r;
  std::vector<Span> spans;
  r.not_relocatable = Visitor(step, base_dir).run(&spans);
  r.relocated = r.not_relocatable.empty();
  return r;
}

std::vector<std::string> relocated_link_args(const LinkStep& step,
                                             const closure::KeyRelocation& relocation) {
  std::vector<std::string> out = step.args;
  if (!relocation.relocated) return out;
  std::vector<Span> spans;
  Visitor(step, relocation.base_dir).run(&spans);
  // Right to left within an argument, so earlier offsets stay valid.
  std::sort(spans.begin(), spans.end(), [](const Span& x, const Span& y) {
    return x.arg != y.arg ? x.arg < y.arg : x.offset > y.offset;
  });
  for (const Span& s : spans) {
    std::string_view value = std::string_view(step.args[s.arg]).substr(s.offset, s.size);
    if (!base::path_is_under(value, relocation.base_dir)) continue;
    out[s.arg].replace(s.offset, s.size, relocation.name(value));
  }
  return out;
}

std::vector<std::string> relocated_paths(const std::vector<std::string>& paths,
                                         const closure::KeyRelocation& relocation) {
  std::vector<std::string> out;
  out.reserve(paths.size());
  for (const std::string& p : paths) out.push_back(relocation.name(p));
  return out;
}

bool bytes_name_dir(std::string_view bytes, std::string_view dir) {
  for (size_t at = bytes.find(dir); at != std::string_view::npos; at = bytes.find(dir, at + 1)) {
    size_t end = at + dir.size();
    if (end == bytes.size() || bytes[end] == '/' || bytes[end] == '\0') return true;
  }
  return false;
}

}  // namespace lexpack::link
