// `lexpack`: subcommands (lex, stats, gc, ...) or, when the first argument is
// not a subcommand, the compiler launcher: `lexpack g++ -c a.cpp -o a.o`.
#include <cstdio>
#include <string_view>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"lexpack: a compile cache for Ninja builds"};
  app.require_subcommand(1);
  int exit_code = 0;
  lexpack::cli::add_lex_command(app, &exit_code);
  lexpack::cli::add_store_commands(app, &exit_code);
  lexpack::cli::add_explain_command(app);
  lexpack::cli::add_ninja_command(app, &exit_code);
  lexpack::cli::add_scan_command(app, &exit_code);
  lexpack::cli::add_warm_command(app, &exit_code);
  // After every add_*: the launcher runs only when argv[1] is no subcommand.
  if (std::optional<int> launched = lexpack::cli::maybe_launch(app, argc, argv)) return *launched;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}
