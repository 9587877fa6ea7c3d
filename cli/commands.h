// The subcommands of the `lexpack` program, each registered by its own file.
// Only cli/ prints errors and picks exit codes.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace lexpack::cli {

// Each add_* registers a subcommand on `app`; its callback sets *exit_code.
void add_lex_command(CLI::App& app, int* exit_code);     // lex_command.cpp
void add_explain_command(CLI::App& app);                 // launch_command.cpp (help text only)
void add_ninja_command(CLI::App& app, int* exit_code);   // ninja_command.cpp
void add_scan_command(CLI::App& app, int* exit_code);    // scan_command.cpp
void add_warm_command(CLI::App& app, int* exit_code);    // warm_command.cpp
void add_server_command(CLI::App& app, int* exit_code);  // server_command.cpp
// stats, gc, verify, clear, export, import, config
void add_store_commands(CLI::App& app, int* exit_code);  // store_commands.cpp

// launch_command.cpp: when argv[1] is neither an option nor a subcommand,
// runs the compile launcher (`lexpack g++ -c a.cpp -o a.o`), or `explain`,
// and returns its exit code; std::nullopt lets CLI11 parse as usual. It runs
// before the CLI11 app is built (every cache hit would pay for building it),
// so it knows the subcommands by name from kSubcommandNames.
std::optional<int> maybe_launch(int argc, char** argv);
// `lexpack explain -C BUILD [OUTPUT...]`: `args` after "explain".
int explain_build(const std::vector<std::string>& args);  // explain_build.cpp

// The name of a subcommand registered on `app` that maybe_launch() would
// take for a compiler (missing from kSubcommandNames), or "" when none is.
std::string unlisted_subcommand(CLI::App& app);

}  // namespace lexpack::cli
