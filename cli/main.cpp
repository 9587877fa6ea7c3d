// `lexpack`: subcommands (lex, stats, gc, ...) or, when the first argument is
// not a subcommand, the compiler launcher: `lexpack g++ -c a.cpp -o a.o`.
#include <cstdio>
#include <string_view>

#include "cli/commands.h"

int main(int argc, char** argv) {
  // A compile: no CLI11 app is built, a cache hit starts as fast as it can.
  if (std::optional<int> launched = lexpack::cli::maybe_launch(argc, argv)) return *launched;
  CLI::App app{"lexpack: a compile cache for Ninja builds", "lexpack"};
  app.require_subcommand(1);
  int exit_code = 0;
  lexpack::cli::add_lex_command(app, &exit_code);
  lexpack::cli::add_store_commands(app, &exit_code);
  lexpack::cli::add_explain_command(app);
  lexpack::cli::add_ninja_command(app, &exit_code);
  lexpack::cli::add_scan_command(app, &exit_code);
  lexpack::cli::add_warm_command(app, &exit_code);
  lexpack::cli::add_server_command(app, &exit_code);
  // A subcommand the launcher does not know would be run as a compiler.
  if (std::string name = lexpack::cli::unlisted_subcommand(app); !name.empty()) {
    std::fprintf(stderr,
                 "lexpack: internal error: subcommand '%s' is missing from the launcher's list\n",
                 name.c_str());
    return 70;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}
