// The subcommands of the `lexpack` program, each registered by its own file.
// Only cli/ prints errors and picks exit codes.
#pragma once

#include <CLI/CLI.hpp>

namespace lexpack::cli {

// Each add_* registers a subcommand on `app`; its callback sets *exit_code.
void add_lex_command(CLI::App& app, int* exit_code);  // lex_command.cpp

}  // namespace lexpack::cli
