// The launcher entry: `lexpack <compiler> <args...>` and `lexpack explain
// <compiler> <args...>`. Both are recognised before CLI11 parses anything,
// because compiler arguments are not lexpack options.
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/process.h"
#include "cli/commands.h"
#include "launcher/launcher.h"
#include "link/link_launcher.h"
#include "server/server_client.h"

namespace lexpack::cli {
namespace {

int finish(const std::vector<std::string>& argv, bool explain, bool exec, int exit_code,
           const std::string& out, const std::string& err, const std::string& error,
           const std::string& explanation);

int run_launcher(const std::vector<std::string>& argv, bool explain) {
  // Taken out first: the compiler, the keys and any server never see it.
  bool busy = false;
  const bool declined = server::take_declined_mark(&busy);
  if (argv.empty()) {
    std::fprintf(stderr, "lexpack: error: no compiler given\n");
    return 2;
  }
  if (link::LinkStep step = link::parse_link_step(argv); step.kind != link::StepKind::kNone) {
    link::LinkResult r = link::launch_link_step(step, argv, explain);
    return finish(argv, explain, r.exec_tool, r.exit_code, r.out, r.err, r.error, r.explanation);
  }
  // The server first: it answers a hit without this process opening anything.
  std::optional<launcher::LaunchResult> served;
  bool server_declined = declined;
  if (!explain && !declined && server::server_enabled()) {
    served = server::try_server(argv, true, &server_declined);
  }
  // A compile the server declined (it knows no valid memo for it) has the
  // server evaluate its closure, with every header evaluation it keeps.
  launcher::EvaluateElsewhere elsewhere;
  if (!explain && !busy && server_declined && server::server_enabled()) {
    elsewhere = [&argv](launcher::ElsewhereAsk ask) {
      return server::evaluate_with_server(argv, ask);
    };
  }
  launcher::LaunchResult r =
      served ? std::move(*served) : launcher::launch(argv, explain, elsewhere);
  // The server that declined checks, when idle, the closure of a compile
  // this process answered from its own memo (a hit the server was too busy
  // to check), so that the next request for it is answered from memory. A
  // compile that ran the compiler is not worth that check: ninja runs it
  // again only once one of its files changed, which the check would not
  // survive (an output deleted, a build dir copied: its first request is
  // checked then, or `lexpack ninja` has the build checked before it runs).
  if (!explain && server_declined && !r.exec_compiler && !r.compiled) {
    server::tell_server_done(argv);
  }
  if (explain && !declined && server::server_enabled()) {
    // What the running server would say first: a compile asks it before
    // taking the path explained below.
    std::optional<std::string> said = server::explain_with_server(argv);
    r.explanation =
        "server: " + (said ? *said : "none running (a compile starts one)") + "\n" + r.explanation;
  }
  if (!r.warning.empty()) std::fprintf(stderr, "lexpack: warning: %s\n", r.warning.c_str());
  return finish(argv, explain, r.exec_compiler, r.exit_code, r.out, r.err, r.error, r.explanation);
}

// Prints or replays one launched step's result and gives the exit code.
int finish(const std::vector<std::string>& argv, bool explain, bool exec, int exit_code,
           const std::string& out, const std::string& err, const std::string& error,
           const std::string& explanation) {
  if (explain) {
    std::fputs(explanation.c_str(), stdout);
    return 0;
  }
  if (exec) {
    base::Status failed = base::exec_replace(argv);
    std::fprintf(stderr, "lexpack: error: %s\n", failed.message().c_str());
    return 127;
  }
  base::write_all(STDOUT_FILENO, out);
  base::write_all(STDERR_FILENO, err);
  if (!error.empty()) {
    std::fprintf(stderr, "lexpack: error: %s\n", error.c_str());
    return 127;
  }
  return exit_code;
}

// `lexpack --link-steps STEP && STEP ...` (each && a word of its own): the
// archive and link steps of one ninja edge, which the plugin hands to one
// launcher (plugin/lexpack_plugin.c, link_steps_command), run in order as
// the shell would run "STEP && STEP": the first that fails ends the chain
// with its exit status. Each is launched as `lexpack STEP` would be; a
// command that is no step runs as it is.
constexpr std::string_view kLinkStepsMark = "--link-steps";

int run_link_steps(const std::vector<std::string>& args) {
  std::vector<std::vector<std::string>> steps(1);
  for (const std::string& a : args) {
    if (a == "&&") {
      steps.emplace_back();
    } else {
      steps.back().push_back(a);
    }
  }
  for (const std::vector<std::string>& argv : steps) {
    if (argv.empty()) {
      std::fprintf(stderr, "lexpack: error: --link-steps: an empty step\n");
      return 2;
    }
    link::LinkResult r;
    if (link::LinkStep step = link::parse_link_step(argv); step.kind != link::StepKind::kNone) {
      r = link::launch_link_step(step, argv, false);
    } else {
      r.exec_tool = true;
    }
    if (r.exec_tool) {
      // Run here, not in this process's place: the steps after it remain.
      base::ProcessResult p = base::run_captured(argv, false);
      r.exit_code = p.exit_code;
      r.out = std::move(p.out);
      r.err = std::move(p.err);
      if (!p.started) r.error = p.error;
    }
    const int code = finish(argv, false, false, r.exit_code, r.out, r.err, r.error, "");
    if (code != 0) return code;
  }
  return 0;
}

// Every subcommand the add_* functions register (the front door in
// client/lexpack_client.c keeps the same list); main() checks the list
// against the app on every run that is not a compile.
constexpr std::string_view kSubcommandNames[] = {
    "lex",    "explain", "ninja",  "scan",   "warm",   "stats",  "gc",
    "verify", "clear",   "export", "import", "config", "server",
};

bool is_subcommand(std::string_view name) {
  for (std::string_view known : kSubcommandNames) {
    if (known == name) return true;
  }
  return false;
}

}  // namespace

void add_explain_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "explain",
      "Tell whether `lexpack <compiler> <args...>` would hit, and if not, why; "
      "`explain -C BUILD [OUTPUT...]`: why the last `lexpack ninja` build of BUILD missed");
  sub->prefix_command();
  sub->allow_extras();
}

std::optional<int> maybe_launch(int argc, char** argv) {
  if (argc < 2) return std::nullopt;
  std::string_view first = argv[1];
  if (first == kLinkStepsMark) {
    return run_link_steps(std::vector<std::string>(argv + 2, argv + argc));
  }
  if (first == "explain" && argc > 2 && std::string_view(argv[2]) == "-C") {
    return explain_build(std::vector<std::string>(argv + 2, argv + argc));
  }
  if (first == "explain") {
    return run_launcher(std::vector<std::string>(argv + 2, argv + argc), true);
  }
  if (first.empty() || first[0] == '-' || is_subcommand(first)) return std::nullopt;
  return run_launcher(std::vector<std::string>(argv + 1, argv + argc), false);
}

std::string unlisted_subcommand(CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (!is_subcommand(sub->get_name())) return sub->get_name();
  }
  return {};
}

}  // namespace lexpack::cli
