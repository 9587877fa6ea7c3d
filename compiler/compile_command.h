// The launcher's model of one gcc/clang command line: which source, which
// outputs, which depfile, which flags change the object, and, when lexpack
// must not cache it, the reason why.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lexpack::compiler {

// kAsm: assembly run through the C preprocessor first (.S, .sx,
// -x assembler-with-cpp); plain assembly (.s) is not cached.
enum class Language { kNone, kC, kCxx, kAsm };

struct CompileCommand {
  std::string compiler;           // argv[0] as given
  std::vector<std::string> args;  // arguments after the compiler, @files expanded
  std::string source;             // as given on the command line
  Language language = Language::kNone;
  std::string output;          // -o, or the name the compiler derives
  bool wants_depfile = false;  // -MD or -MMD
  std::string depfile;         // -MF, or the name the compiler derives
  bool debug_info = false;     // some -g level above 0
  bool split_dwarf = false;    // -gsplit-dwarf
  std::string dwo_output;      // where -gsplit-dwarf writes the .dwo
  std::vector<std::pair<std::string, std::string>> prefix_maps;  // debug info: old=new
  // -fmacro-prefix-map and -ffile-prefix-map: what __FILE__ expands to.
  std::vector<std::pair<std::string, std::string>> macro_prefix_maps;
  bool has_debug_compilation_dir = false;    // -fdebug-compilation-dir / -ffile-compilation-dir
  std::vector<std::string> forced_includes;  // -include and -imacros files, in order
  // -D and -U values in order ("NAME", "NAME=VALUE", "NAME(ARGS)=VALUE").
  struct MacroArg {
    bool undef = false;
    std::string text;
  };
  std::vector<MacroArg> macros;
  // Arguments that may change the include search list; the list itself is
  // asked from the compiler with these (see search_list.h).
  std::vector<std::string> search_args;
  // Empty when the command is cacheable; otherwise a short stable reason
  // ("preprocess_only", "linking", ...), used as a counter name.
  std::string uncacheable;
  std::string uncacheable_detail;  // the argument that decided it
  // -x c-header / -x c++-header: the output is a precompiled header (.gch).
  bool makes_pch = false;
  // -c and one source: a compile, cacheable or not (`uncacheable` keeps only
  // the first reason found, which need not be that it links).
  bool compiles = false;
};

// Parses `argv` (argv[0] is the compiler). Response files (@file) are
// expanded; a response file that cannot be read makes the command
// uncacheable, never an error: the compiler will report it.
CompileCommand parse_compile_command(const std::vector<std::string>& argv);

// Flags that neither gcc nor clang turns into search dirs, left out of the
// search arguments by name (as is any -fvisibility=...): code generation and
// x86 instruction sets (not -m32/-m64/-march=, which may pick another
// multilib). tests/compiler/derived_search_list_test.cpp
// checks each against g++ and clang++-14.
std::span<const std::string_view> search_neutral_flags();

// True for an option whose value may be the next argument (-o out, -I dir).
bool takes_separate_value(std::string_view arg);

// "c" or "c++", as given to -x.
std::string_view language_name(Language language);

// The language gcc and clang infer from a source file's suffix; kNone if none.
Language language_from_path(std::string_view path);

// True when the working directory is covered by a debug prefix map, so the
// object does not record it.
bool cwd_is_mapped(const CompileCommand& command, std::string_view cwd);

}  // namespace lexpack::compiler
