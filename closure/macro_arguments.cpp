// Which arguments decide the compiler's answers: see macro_arguments.h.
#include "closure/macro_arguments.h"

#include <string_view>

namespace lexpack::closure {

std::vector<std::string> macro_arguments(const compiler::CompileCommand& command,
                                         bool include_dirs) {
  // Include directories stay unless asked not to: gcc reads stdc-predef.h
  // through the include search before every file, so a directory holding
  // its own changes the predefined macros.
  static constexpr std::string_view kWithValue[] = {"-o",       "-MF",      "-MT", "-MQ",
                                                    "-include", "-imacros", "-x"};
  static constexpr std::string_view kJoined[] = {"-o", "-MF", "-MT", "-MQ"};
  static constexpr std::string_view kDirs[] = {"-I", "-iquote", "-isystem", "-idirafter"};
  std::vector<std::string> out;
  const std::vector<std::string>& a = command.args;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& arg = a[i];
    bool separate = false;
    for (std::string_view v : kWithValue) separate = separate || arg == v;
    if (!include_dirs) {
      for (std::string_view v : kDirs) separate = separate || arg == v;
    }
    if (separate) {
      ++i;
      continue;
    }
    bool joined = false;
    for (std::string_view v : kJoined) joined = joined || arg.starts_with(v);
    if (!include_dirs) {
      for (std::string_view v : kDirs) joined = joined || arg.starts_with(v);
    }
    if (joined || arg == "-c" || arg == "-MD" || arg == "-MMD" || arg == "-MP" || arg == "-MG" ||
        arg == "-M" || arg == "-MM" || arg == command.source) {
      continue;
    }
    out.push_back(arg);
  }
  return out;
}

MacroArguments split_macro_arguments(const compiler::CompileCommand& command, bool include_dirs,
                                     bool defines_apart) {
  MacroArguments out;
  out.ask = macro_arguments(command, include_dirs);
  // Flags that define or undefine a macro out of the command's sight, or
  // take the next argument as their value, leave every argument in place.
  for (const std::string& a : out.ask) {
    if (a.starts_with("-Wp,") || a.starts_with("-X") || a.starts_with("--define-macro") ||
        a.starts_with("--undefine-macro")) {
      return out;
    }
  }
  bool has_undef = false;
  std::vector<std::string> defines;
  for (const compiler::CompileCommand::MacroArg& m : command.macros) {
    has_undef = has_undef || m.undef;
    if (!m.undef) defines.push_back(m.text);
  }
  defines_apart = defines_apart && !has_undef;
  std::vector<std::string> ask;
  ask.reserve(out.ask.size());
  for (size_t i = 0; i < out.ask.size(); ++i) {
    const std::string& a = out.ask[i];
    if (defines_apart && a == "-D" && i + 1 < out.ask.size()) {
      out.defines.push_back(out.ask[++i]);
    } else if (defines_apart && a.starts_with("-D") && a.size() > 2) {
      out.defines.push_back(a.substr(2));
    } else if (!(a.starts_with("-W") && a.size() > 2)) {
      ask.push_back(a);
    }
  }
  // Only when the defines found are the command's own, in its order.
  if (defines_apart && out.defines != defines) return {macro_arguments(command, include_dirs), {}};
  out.ask = std::move(ask);
  return out;
}

}  // namespace lexpack::closure
