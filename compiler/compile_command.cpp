// Parsing gcc/clang command lines into a CompileCommand. Anything lexpack
// cannot model exactly is marked uncacheable with a reason; the launcher then
// runs the compiler unchanged, so being strict here never breaks a build.
#include "compiler/compile_command.h"

#include <array>
#include <span>

#include "compiler/response_file.h"

namespace lexpack::compiler {
namespace {

// Options whose value may be the next argument.
constexpr std::array<std::string_view, 36> kSeparateValue = {
    "-o",           "-x",           "-D",
    "-U",           "-I",           "-iquote",
    "-isystem",     "-idirafter",   "-include",
    "-imacros",     "-MF",          "-MT",
    "-MQ",          "-isysroot",    "--sysroot",
    "-iprefix",     "-iwithprefix", "-iwithprefixbefore",
    "-imultilib",   "-Xclang",      "-Xpreprocessor",
    "-Xassembler",  "-Xlinker",     "-target",
    "-arch",        "-L",           "-T",
    "-u",           "-z",           "-aux-info",
    "--param",      "-MJ",          "-ivfsoverlay",
    "-include-pch", "-A",           "-B",
};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Options after which lexpack cannot know what the compiler does, or which
// read or write files outside the model. First match wins.
struct Refusal {
  std::string_view prefix;
  bool exact;
  std::string_view reason;
};
constexpr std::array<Refusal, 40> kRefusals = {{
    {"-E", true, "preprocess_only"},
    {"-S", true, "no_object_output"},
    {"-fsyntax-only", true, "no_object_output"},
    {"-M", true, "dependencies_only"},
    {"-MM", true, "dependencies_only"},
    {"-save-temps", false, "save_temps"},
    {"--save-temps", false, "save_temps"},
    {"-fprofile-arcs", true, "profile_or_coverage"},
    {"-ftest-coverage", true, "profile_or_coverage"},
    {"--coverage", true, "profile_or_coverage"},
    {"-fprofile-", false, "profile_or_coverage"},
    {"-fcs-profile-generate", false, "profile_or_coverage"},
    {"-fauto-profile", false, "profile_or_coverage"},
    {"-fcoverage-", false, "profile_or_coverage"},
    {"-fmodules", false, "modules"},
    {"-fmodule-", false, "modules"},
    {"-fprebuilt-module-path", false, "modules"},
    {"-fcxx-modules", false, "modules"},
    {"-Xclang", true, "opaque_flag"},
    {"-Xpreprocessor", true, "opaque_flag"},
    {"-Wp,", false, "opaque_flag"},
    {"-I-", true, "opaque_flag"},
    {"-fplugin", false, "reads_unhashed_file"},
    {"-specs", false, "reads_unhashed_file"},
    {"--specs", false, "reads_unhashed_file"},
    {"-fsanitize-blacklist", false, "reads_unhashed_file"},
    {"-fsanitize-ignorelist", false, "reads_unhashed_file"},
    {"-include-pch", true, "reads_unhashed_file"},
    {"-ivfsoverlay", true, "reads_unhashed_file"},
    {"-B", false, "reads_unhashed_file"},
    {"-fdump-", false, "side_outputs"},
    {"-fstack-usage", true, "side_outputs"},
    {"-fcallgraph-info", false, "side_outputs"},
    {"-ftime-trace", false, "side_outputs"},
    {"-MJ", false, "side_outputs"},
    {"-aux-info", true, "side_outputs"},
    {"-v", true, "verbose"},
    {"-###", true, "verbose"},
    {"--help", false, "verbose"},
    {"--version", true, "verbose"},
}};

const Refusal* find_refusal(std::string_view arg) {
  for (const Refusal& r : kRefusals) {
    if (r.exact ? arg == r.prefix : starts_with(arg, r.prefix)) return &r;
  }
  return nullptr;
}

std::string replace_suffix(std::string_view path, std::string_view suffix) {
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  std::string out(path);
  if (dot != std::string_view::npos && (slash == std::string_view::npos || dot > slash + 1)) {
    out.resize(dot);
  }
  return out + std::string(suffix);
}

std::string_view basename_of(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Why an option passed on to the assembler (-Wa,A,B or -Xassembler A) makes
// a compile uncacheable, or null: a listing file (-a...=file) and a
// dependency file (--MD) are outputs a hit would not write, and @file reads
// options from a file the key does not hold.
const char* assembler_option_refusal(std::string_view options) {
  while (!options.empty()) {
    const size_t comma = options.find(',');
    const std::string_view o = options.substr(0, comma);
    options = comma == std::string_view::npos ? std::string_view() : options.substr(comma + 1);
    if (starts_with(o, "@")) return "reads_unhashed_file";
    if ((starts_with(o, "-a") && o.find('=') != std::string_view::npos) || o == "--MD" ||
        starts_with(o, "--MD=")) {
      return "side_outputs";
    }
  }
  return nullptr;
}

Language language_from_x(std::string_view x, bool* known, bool* header) {
  *known = true;
  *header = x == "c-header" || x == "c++-header";
  if (x == "c" || x == "c-header") return Language::kC;
  if (x == "c++" || x == "c++-header") return Language::kCxx;
  if (x == "assembler-with-cpp") return Language::kAsm;
  if (x == "none") return Language::kNone;
  *known = false;
  return Language::kNone;
}

// search_neutral_flags().
constexpr std::string_view kCodegenFlags[] = {
    "-fPIC",
    "-fpic",
    "-fPIE",
    "-fpie",
    "-fno-pic",
    "-fno-pie",
    "-fno-PIC",
    "-fno-PIE",
    "-fvisibility-inlines-hidden",
    "-fno-delete-null-pointer-checks",
    "-ffunction-sections",
    "-fdata-sections",
    "-fomit-frame-pointer",
    "-fno-omit-frame-pointer",
    "-fexceptions",
    "-fno-exceptions",
    "-frtti",
    "-fno-rtti",
    "-fno-strict-aliasing",
    "-fstrict-aliasing",
    "-fwrapv",
    "-fno-math-errno",
    "-fno-plt",
    "-fno-semantic-interposition",
    "-fstack-clash-protection",
    "-fcf-protection",
    "-fno-common",
    "-fstack-protector",
    "-fstack-protector-strong",
    "-fno-stack-protector",
    // x86 instruction-set extensions (not -m32/-m64/-march: those may pick
    // another multilib).
    "-msse2",
    "-msse3",
    "-mssse3",
    "-msse4.1",
    "-msse4.2",
    "-mpopcnt",
    "-mavx",
    "-mavx2",
    "-mfma",
    "-mf16c",
    "-mbmi",
    "-mbmi2",
    "-mlzcnt",
    "-mmovbe",
    "-maes",
    "-mpclmul",
    "-mavx512f",
    "-mavx512bw",
    "-mavx512vl",
};

bool is_codegen_flag(std::string_view arg) {
  if (starts_with(arg, "-fvisibility=")) return true;
  for (std::string_view f : kCodegenFlags) {
    if (arg == f) return true;
  }
  return false;
}

// Arguments that cannot change the include search list: left out of the
// search-list query so that TUs differing only in them share one answer.
// The prefix maps rewrite paths written into outputs (__FILE__, debug
// info), never which directories are searched; each checkout has its own,
// so keeping them would ask every checkout's compiler again.
bool irrelevant_to_search(std::string_view arg) {
  return arg == "-c" || starts_with(arg, "-ffile-prefix-map=") ||
         starts_with(arg, "-fdebug-prefix-map=") || starts_with(arg, "-fmacro-prefix-map=") ||
         is_codegen_flag(arg) || starts_with(arg, "-D") || starts_with(arg, "-U") ||
         starts_with(arg, "-W") || starts_with(arg, "-O") || starts_with(arg, "-g") ||
         starts_with(arg, "-std=") || starts_with(arg, "-M") || starts_with(arg, "-fdiagnostics") ||
         arg == "-pipe" || arg == "-w" || arg == "-pedantic" || arg == "-pedantic-errors";
}

// Keeps the first reason a command is uncacheable, and the argument that
// decided it.
void refuse(CompileCommand* cmd, std::string_view reason, std::string_view detail) {
  if (cmd->uncacheable.empty()) {
    cmd->uncacheable = std::string(reason);
    cmd->uncacheable_detail = std::string(detail);
  }
}

// One command line's arguments, read in order: what each says goes into the
// command, and what decides its source and outputs is kept until every
// argument is seen.
class ArgumentParser {
 public:
  ArgumentParser(CompileCommand* cmd, bool cxx_driver) : cmd_(*cmd), cxx_driver_(cxx_driver) {}
  void parse();
  // The source, the language and the outputs, once every argument is seen.
  void settle();

 private:
  void refuse(std::string_view reason, std::string_view detail) {
    compiler::refuse(&cmd_, reason, detail);
  }
  // The value of a two-argument option `opt` given as `arg`, joined or
  // separate (then the next argument is taken).
  bool value_of(const std::string& arg, std::string_view opt, std::string* value);
  void add_source(const std::string& arg);
  // True when `arg` (with its value) says nothing about the search list.
  bool take_option(const std::string& arg);

  CompileCommand& cmd_;
  const bool cxx_driver_;
  size_t i_ = 0;  // the argument being read
  bool compile_only_ = false;
  bool have_output_ = false;
  bool depfile_given_ = false;
  bool x_known_ = true;
  bool x_header_ = false;
  Language x_language_ = Language::kNone;
  std::string x_value_;
  std::vector<std::string> sources_;
  std::vector<Language> source_languages_;
  std::vector<bool> source_headers_;  // compiled to a precompiled header
};

void ArgumentParser::parse() {
  const std::vector<std::string>& a = cmd_.args;
  for (i_ = 0; i_ < a.size(); ++i_) {
    const std::string& arg = a[i_];
    if (arg.empty()) {
      refuse("garbage_argument", "empty argument");
      continue;
    }
    if (arg == "-") {
      refuse("stdin_input", arg);
      continue;
    }
    if (arg[0] != '-') {
      add_source(arg);
      continue;
    }
    if (const Refusal* r = find_refusal(arg)) refuse(r->reason, arg);
    if (starts_with(arg, "-Wa,")) {
      if (const char* r = assembler_option_refusal(std::string_view(arg).substr(4))) refuse(r, arg);
    } else if (arg == "-Xassembler" && i_ + 1 < a.size()) {
      if (const char* r = assembler_option_refusal(a[i_ + 1])) refuse(r, arg + " " + a[i_ + 1]);
    }
    if (take_option(arg)) continue;

    if (!irrelevant_to_search(arg)) cmd_.search_args.push_back(arg);
    if (takes_separate_value(arg) && i_ + 1 < a.size()) {
      if (!irrelevant_to_search(arg)) cmd_.search_args.push_back(a[i_ + 1]);
      ++i_;
    } else if (takes_separate_value(arg)) {
      refuse("missing_argument", arg);
    }
  }
}

bool ArgumentParser::value_of(const std::string& arg, std::string_view opt, std::string* value) {
  if (arg == opt) {
    if (i_ + 1 >= cmd_.args.size()) {
      refuse("missing_argument", arg);
      return false;
    }
    *value = cmd_.args[++i_];
    return true;
  }
  if (starts_with(arg, opt) && arg.size() > opt.size()) {
    std::string_view rest = std::string_view(arg).substr(opt.size());
    if (starts_with(opt, "--") && rest[0] == '=') rest.remove_prefix(1);
    *value = std::string(rest);
    return true;
  }
  return false;
}

void ArgumentParser::add_source(const std::string& arg) {
  if (!x_known_) refuse("unknown_language", "-x " + x_value_);
  Language lang = x_language_ != Language::kNone ? x_language_ : language_from_path(arg);
  // g++ and clang++ compile a .c file as C++ unless -x says otherwise.
  if (x_language_ == Language::kNone && lang == Language::kC && cxx_driver_) {
    lang = Language::kCxx;
  }
  sources_.push_back(arg);
  source_languages_.push_back(lang);
  source_headers_.push_back(x_header_);
  cmd_.search_args.push_back(arg);  // removed again in settle() once known as the source
}

bool ArgumentParser::take_option(const std::string& arg) {
  std::string value;
  if (arg == "-c") {
    compile_only_ = true;
  } else if (value_of(arg, "-o", &value)) {
    cmd_.output = value;
    have_output_ = true;
    return true;
  } else if (value_of(arg, "-x", &value)) {
    x_value_ = value;
    x_language_ = language_from_x(value, &x_known_, &x_header_);
    return true;
  } else if (value_of(arg, "-MF", &value)) {
    cmd_.depfile = value;
    depfile_given_ = true;
    return true;
  } else if (value_of(arg, "-MT", &value) || value_of(arg, "-MQ", &value)) {
    return true;
  } else if (arg == "-MD" || arg == "-MMD") {
    cmd_.wants_depfile = true;
    return true;
  } else if (arg == "-MP" || arg == "-MG") {
    return true;
  } else if (value_of(arg, "-include", &value) || value_of(arg, "-imacros", &value)) {
    cmd_.forced_includes.push_back(value);
    return true;
  } else if (value_of(arg, "-D", &value)) {
    cmd_.macros.push_back({false, value});
    return true;
  } else if (value_of(arg, "-U", &value)) {
    cmd_.macros.push_back({true, value});
    return true;
  } else if (starts_with(arg, "-fdebug-prefix-map=") || starts_with(arg, "-ffile-prefix-map=") ||
             starts_with(arg, "-fmacro-prefix-map=")) {
    std::string_view map = std::string_view(arg).substr(arg.find('=') + 1);
    size_t eq = map.find('=');
    if (eq == std::string_view::npos) {
      refuse("garbage_argument", arg);
    } else {
      std::pair<std::string, std::string> m(std::string(map.substr(0, eq)),
                                            std::string(map.substr(eq + 1)));
      if (!starts_with(arg, "-fmacro-")) cmd_.prefix_maps.push_back(m);
      if (!starts_with(arg, "-fdebug-")) cmd_.macro_prefix_maps.push_back(m);
    }
  } else if (starts_with(arg, "-fdebug-compilation-dir") ||
             starts_with(arg, "-ffile-compilation-dir")) {
    cmd_.has_debug_compilation_dir = true;
  } else if (arg == "-gsplit-dwarf" || starts_with(arg, "-gsplit-dwarf=")) {
    cmd_.split_dwarf = true;
    cmd_.debug_info = true;
  } else if (arg == "-gno-split-dwarf") {
    cmd_.split_dwarf = false;
  } else if (arg == "-g0") {
    cmd_.debug_info = false;
  } else if (starts_with(arg, "-g") && !starts_with(arg, "-gno-") && !starts_with(arg, "-gz")) {
    cmd_.debug_info = true;
  }
  return false;
}

void ArgumentParser::settle() {
  CompileCommand& cmd = cmd_;
  if (sources_.empty()) {
    refuse(compile_only_ ? "no_source" : "linking", "");
    return;
  }
  if (!compile_only_) refuse("linking", "no -c");
  if (sources_.size() > 1) {
    bool all_sources = true;
    for (Language l : source_languages_) all_sources = all_sources && l != Language::kNone;
    refuse(all_sources ? "several_sources" : "linking", sources_[1]);
    return;
  }
  cmd.source = sources_[0];
  cmd.language = source_languages_[0];
  cmd.makes_pch = source_headers_[0];
  cmd.compiles = compile_only_;
  if (cmd.language == Language::kNone) refuse("unknown_language", cmd.source);
  for (size_t i = 0; i < cmd.search_args.size(); ++i) {
    if (cmd.search_args[i] == cmd.source) {
      cmd.search_args.erase(cmd.search_args.begin() + i);
      break;
    }
  }
  // A precompiled header goes beside its header by default.
  if (!have_output_) {
    cmd.output =
        cmd.makes_pch ? cmd.source + ".gch" : replace_suffix(basename_of(cmd.source), ".o");
  }
  if (cmd.output == "-") refuse("output_to_stdout", "-o -");
  if (cmd.wants_depfile && !depfile_given_) cmd.depfile = replace_suffix(cmd.output, ".d");
  if (!cmd.wants_depfile && depfile_given_) cmd.depfile.clear();  // -MF alone writes nothing
  if (cmd.split_dwarf) cmd.dwo_output = replace_suffix(cmd.output, ".dwo");
}

}  // namespace

std::span<const std::string_view> search_neutral_flags() {
  return kCodegenFlags;
}

bool takes_separate_value(std::string_view arg) {
  for (std::string_view o : kSeparateValue) {
    if (arg == o) return true;
  }
  return false;
}

std::string_view language_name(Language language) {
  switch (language) {
    case Language::kC:
      return "c";
    case Language::kCxx:
      return "c++";
    case Language::kAsm:
      return "assembler-with-cpp";
    case Language::kNone:
      break;
  }
  return "none";
}

Language language_from_path(std::string_view path) {
  std::string_view base = basename_of(path);
  size_t dot = base.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return Language::kNone;
  std::string_view ext = base.substr(dot + 1);
  if (ext == "c") return Language::kC;
  if (ext == "cc" || ext == "cp" || ext == "cxx" || ext == "cpp" || ext == "CPP" || ext == "c++" ||
      ext == "C") {
    return Language::kCxx;
  }
  if (ext == "S" || ext == "sx") return Language::kAsm;
  return Language::kNone;
}

CompileCommand parse_compile_command(const std::vector<std::string>& argv) {
  CompileCommand cmd;
  if (argv.empty()) {
    refuse(&cmd, "no_compiler", "");
    return cmd;
  }
  cmd.compiler = argv[0];
  // g++, c++, clang++-14, x86_64-linux-gnu-g++-12, ...
  const bool cxx_driver = basename_of(cmd.compiler).find("++") != std::string_view::npos;
  cmd.args.assign(argv.begin() + 1, argv.end());
  std::string err;
  if (!expand_response_files(&cmd.args, &err)) {
    refuse(&cmd, "bad_response_file", err);
    return cmd;
  }
  ArgumentParser parser(&cmd, cxx_driver);
  parser.parse();
  parser.settle();
  return cmd;
}

bool cwd_is_mapped(const CompileCommand& command, std::string_view cwd) {
  if (command.has_debug_compilation_dir) return true;
  for (const auto& [from, to] : command.prefix_maps) {
    if (from.empty() || !starts_with(cwd, from)) continue;
    if (cwd.size() == from.size() || from.back() == '/' || cwd[from.size()] == '/') return true;
  }
  return false;
}

}  // namespace lexpack::compiler
