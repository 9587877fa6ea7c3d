// The command model of archive and link steps. Deliberately narrow: an option
// whose effect on the inputs or outputs is not understood makes the step
// uncacheable, so that lexpack never stores what it cannot reproduce.
#include "link/link_step.h"

#include <array>

#include "base/file_util.h"

namespace lexpack::link {
namespace {

std::string_view base_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// `base` is `name` or "<triple>-<name>" (a triple has at least one '-').
bool tool_named(std::string_view base, std::string_view name) {
  if (base == name) return true;
  if (base.size() <= name.size() + 1) return false;
  std::string_view prefix = base.substr(0, base.size() - name.size() - 1);
  return base.substr(base.size() - name.size()) == name &&
         base[base.size() - name.size() - 1] == '-' && prefix.find('-') != std::string_view::npos;
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

LinkStep parse_archive(LinkStep step) {
  step.kind = StepKind::kArchive;
  if (step.args.size() < 2) {
    step.uncacheable = "ar without archive";
    return step;
  }
  std::string_view ops = step.args[0];
  if (starts_with(ops, "-")) ops.remove_prefix(1);
  int op_count = 0;
  bool create = false;
  for (char c : ops) {
    if (c == 'q' || c == 'r') {
      ++op_count;
    } else if (c == 'c') {
      create = true;
    } else if (c != 's' && c != 'D' && c != 'S') {
      // u (timestamps), U (non-deterministic), T (thin), a/b/i (positions),
      // d/m/p/t/x (not archive writes) and anything else.
      step.uncacheable = "ar modifier '" + std::string(1, c) + "'";
      return step;
    }
  }
  if (op_count != 1) {
    step.uncacheable = "ar operation not q or r";
    return step;
  }
  (void)create;  // an existing archive is a keyed input either way
  step.output = step.args[1];
  if (step.output.empty() || step.output[0] == '-' || step.output[0] == '@') {
    step.uncacheable = "ar archive name";
    return step;
  }
  for (size_t i = 2; i < step.args.size(); ++i) {
    const std::string& m = step.args[i];
    if (m.empty() || m[0] == '-' || m[0] == '@') {
      step.uncacheable = "ar member argument " + m;
      return step;
    }
    step.inputs.push_back(m);
  }
  return step;
}

LinkStep parse_ranlib(LinkStep step) {
  step.kind = StepKind::kRanlib;
  std::vector<std::string> files;
  for (const std::string& a : step.args) {
    if (a == "-D") continue;
    if (a.empty() || a[0] == '-' || a[0] == '@') {
      step.uncacheable = "ranlib option " + a;
      return step;
    }
    files.push_back(a);
  }
  if (files.size() != 1) {
    step.uncacheable = "ranlib of other than one archive";
    return step;
  }
  step.output = files[0];
  step.inputs = files;
  return step;
}

// An input the linker takes by its name for an object, an archive or a
// shared library. Any other input may be a linker script (GNU ld reads a
// file it does not recognise as one).
bool is_binary_input_name(std::string_view path) {
  std::string_view base = base_name(path);
  for (std::string_view ext : {".o", ".obj", ".lo", ".a", ".so"}) {
    if (base.size() > ext.size() && base.substr(base.size() - ext.size()) == ext) return true;
  }
  return base.find(".so.") != std::string_view::npos;
}

// A file the driver would compile before linking (by its extension).
bool is_source_name(std::string_view path) {
  size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || path.find('/', dot) != std::string_view::npos) return false;
  std::string_view ext = path.substr(dot + 1);
  for (std::string_view e : {"c",  "cc", "cp", "cpp", "cxx", "c++", "C", "CPP", "i",  "ii", "m",
                             "mm", "s",  "S",  "sx",  "f",   "f90", "F", "F90", "cu", "go", "d"}) {
    if (ext == e) return true;
  }
  return false;
}

// `cmake -E rm -f FILE...` exactly; any other cmake command is not a step.
LinkStep parse_cmake_remove(LinkStep step) {
  const std::vector<std::string>& a = step.args;
  if (a.size() < 4 || a[0] != "-E" || a[1] != "rm" || a[2] != "-f") return LinkStep{};
  for (size_t i = 3; i < a.size(); ++i) {
    if (a[i].empty() || a[i][0] == '-') return LinkStep{};
  }
  step.kind = StepKind::kRemove;
  step.output = a[3];  // names the step in the decision log
  step.inputs.assign(a.begin() + 3, a.end());
  return step;
}

LinkStep parse_link(LinkStep step) {
  step.kind = StepKind::kLink;
  const std::vector<std::string>& a = step.args;
  LinkerOptionReader linker;
  // Before any other argument is judged: `g++ -flto -c a.cpp` is a compile,
  // whatever comes first.
  for (const std::string& s : a) {
    if (s == "-c" || s == "-S" || s == "-E" || starts_with(s, "-M") || s == "-v" || s == "-###" ||
        starts_with(s, "-print-") || starts_with(s, "--print") || s == "--help" ||
        starts_with(s, "-save-temps") || s == "-" || s == "-pipe" || s == "-x") {
      step.kind = StepKind::kNone;  // not a plain link: left to the compile path
      step.uncacheable = "not a link: " + s;
      return step;
    }
  }
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& s = a[i];
    // An LTO link: cached when the toolchain's LTO tools are keyed (gcc's).
    if (starts_with(s, "-flto") && s != "-fno-lto") step.lto = s;
    if (starts_with(s, "-fuse-ld=")) {
      step.uncacheable = "linker chosen with " + s;
      return step;
    }
    // Options that choose another linker, GCC installation, target or
    // emulation: the toolchain identity and ld's SEARCH_DIRs are asked
    // without them.
    if (starts_with(s, "-fplugin") || starts_with(s, "-specs") || starts_with(s, "--specs") ||
        starts_with(s, "-fprofile-use") || starts_with(s, "-fauto-profile") ||
        starts_with(s, "--sysroot") || s == "-B" || starts_with(s, "-B") ||
        starts_with(s, "--ld-path") || starts_with(s, "--gcc-toolchain") ||
        starts_with(s, "-gcc-toolchain") || starts_with(s, "--gcc-install-dir") || s == "-target" ||
        starts_with(s, "--target") || s == "-m32" || s == "-mx32" || s == "-m16") {
      step.uncacheable = "driver option " + s;
      return step;
    }
    if (!s.empty() && s[0] == '@') {
      step.uncacheable = "response file " + s;
      return step;
    }
    if (starts_with(s, "-Wl,") || s == "-Xlinker") {
      if (s == "-Xlinker") {
        if (i + 1 >= a.size()) {
          step.uncacheable = "-Xlinker without argument";
          return step;
        }
        linker.add(a[++i]);
      } else {
        std::string_view rest = std::string_view(s).substr(4);
        for (size_t comma = 0; comma != std::string_view::npos; rest.remove_prefix(comma + 1)) {
          comma = rest.find(',');
          linker.add(rest.substr(0, comma));
        }
      }
      if (!linker.result().uncacheable.empty()) {
        step.uncacheable = linker.result().uncacheable;
        return step;
      }
      continue;
    }
    if (linker.pending()) {
      step.uncacheable = "linker option without its argument before " + s;
      return step;
    }
    if (s == "-o") {
      if (i + 1 >= a.size() || !step.output.empty()) {
        step.uncacheable = "-o";
        return step;
      }
      step.output = a[++i];
      continue;
    }
    if (starts_with(s, "-o")) {
      step.uncacheable = "joined -o";
      return step;
    }
    if (starts_with(s, "-T")) linker.result().has_script = true;
    if (driver_option_takes_argument(s)) {
      ++i;
      continue;
    }
    if (!s.empty() && s[0] != '-') {
      if (is_source_name(s)) {
        step.uncacheable = "compiles a source on the way: " + s;
        return step;
      }
      if (!is_binary_input_name(s)) linker.result().has_script = true;
      step.inputs.push_back(s);
    }
  }
  if (linker.pending()) {
    step.uncacheable = "linker option without its argument";
    return step;
  }
  step.linker = std::move(linker.result());
  if (step.output.empty()) {
    step.uncacheable = "link without -o";
  } else if (step.inputs.empty()) {
    step.kind = StepKind::kNone;
    step.uncacheable = "no input files";
  }
  return step;
}

}  // namespace

bool driver_option_takes_argument(std::string_view a) {
  static constexpr std::array<std::string_view, 12> kWithArg = {
      "-L",      "-l",       "-T",        "-u", "-e", "-z",
      "-target", "--target", "-isysroot", "-B", "-x", "-Xassembler"};
  for (std::string_view k : kWithArg) {
    if (a == k) return true;
  }
  return false;
}

bool is_archiver_name(std::string_view base) {
  return tool_named(base, "ar");
}

bool is_ranlib_name(std::string_view base) {
  return tool_named(base, "ranlib");
}

bool is_driver_name(std::string_view name) {
  size_t end = name.size();
  size_t i = end;
  while (i > 0 && ((name[i - 1] >= '0' && name[i - 1] <= '9') || name[i - 1] == '.')) --i;
  if (i < end && i > 0 && name[i - 1] == '-' && name[i] >= '0' && name[i] <= '9') end = i - 1;
  std::string_view stem = name.substr(0, end);
  for (std::string_view n : {"gcc", "g++", "cc", "c++", "clang", "clang++"}) {
    if (stem == n) return true;
    if (n.size() >= 3 && tool_named(stem, n)) return true;
  }
  return false;
}

std::vector<std::string> split_response_file(std::string_view text) {
  // libiberty's buildargv, which gcc and clang (GNU style) follow: blanks
  // separate words; a backslash takes the next character as it is, anywhere;
  // single and double quotes group until their match.
  std::vector<std::string> out;
  std::string word;
  bool in_word = false, escaped = false;
  char quote = 0;
  for (char c : text) {
    if (escaped) {
      word.push_back(c);
      escaped = false;
    } else if (c == '\\') {
      escaped = in_word = true;
    } else if (quote) {
      if (c == quote) {
        quote = 0;
      } else {
        word.push_back(c);
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
      if (in_word) out.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word.push_back(c);
      in_word = true;
    }
  }
  if (in_word) out.push_back(std::move(word));
  return out;
}

namespace {

// Replaces each @file in *args by its words (nested ones too); false with
// *why when one cannot be read.
bool expand_response_files(std::vector<std::string>* args, std::string* why) {
  constexpr int kMaxFiles = 64;  // nested ones included, as gcc's expandargv bounds them
  int files = 0;
  for (size_t i = 0; i < args->size();) {
    const std::string& a = (*args)[i];
    if (a.size() < 2 || a[0] != '@') {
      ++i;
      continue;
    }
    base::Result<std::string> text = base::read_file(a.substr(1));
    if (!text.ok()) {
      *why = "response file " + a + " unreadable";  // the driver keeps it as an argument
      return false;
    }
    if (++files > kMaxFiles) {
      *why = "more than " + std::to_string(kMaxFiles) + " response files";
      return false;
    }
    std::vector<std::string> words = split_response_file(*text);
    args->erase(args->begin() + std::ptrdiff_t(i));
    args->insert(args->begin() + std::ptrdiff_t(i), words.begin(), words.end());
    // Not advanced: a response file may name another one.
  }
  return true;
}

}  // namespace

LinkStep parse_link_step(const std::vector<std::string>& argv) {
  LinkStep step;
  if (argv.empty()) return step;
  step.tool = argv[0];
  step.args.assign(argv.begin() + 1, argv.end());
  std::string_view base = base_name(step.tool);
  if (is_archiver_name(base)) return parse_archive(std::move(step));
  if (is_ranlib_name(base)) return parse_ranlib(std::move(step));
  if (is_driver_name(base)) {
    // A link's arguments as the driver reads them: the words of each @file
    // in its place. The key holds them, so the file's content is keyed; the
    // command still runs as given.
    std::string why;
    if (!expand_response_files(&step.args, &why)) {
      step.args.assign(argv.begin() + 1, argv.end());
      LinkStep parsed = parse_link(std::move(step));
      if (parsed.kind == StepKind::kLink && parsed.uncacheable.empty()) parsed.uncacheable = why;
      return parsed;
    }
    return parse_link(std::move(step));
  }
  if (base == "cmake") return parse_cmake_remove(std::move(step));
  return step;
}

}  // namespace lexpack::link
