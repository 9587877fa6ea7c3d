// `lexpack server`: start, stop or query the per-user server of the cache
// directory (`--run` is what a launcher starts in the background; it stays
// in the foreground here).
#include <unistd.h>

#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "server/server.h"
#include "server/server_client.h"

namespace lexpack::cli {
namespace {

// How long `server --start` waits for the server it started to answer.
constexpr int kStartWaitMs = 10000;

struct ServerArgs {
  bool start = false, stop = false, status = false, run = false, drop_trust = false;
  uint64_t idle = 0;
};

int run_server_command(const ServerArgs& a) {
  using server::RequestKind;
  if (a.run) {
    server::ServerOptions options;
    options.idle_seconds = a.idle;
    base::Status s = server::run_server(options);
    if (!s.ok()) {
      std::fprintf(stderr, "lexpack: error: server: %s\n", s.message().c_str());
      return 1;
    }
    return 0;
  }
  if (a.start) {
    if (server::control(RequestKind::kStatus)) return 0;  // already running
    if (!server::start_server()) {
      std::fprintf(stderr, "lexpack: error: cannot start the server\n");
      return 1;
    }
    // Started in the background: `--start` returns once it answers, so a
    // `--status` or a compile right after it finds it. A server killed a
    // moment ago may still hold the start lock as it dies (start_server then
    // takes it for one starting): asked again now and then, it starts one
    // once the lock is free.
    for (int waited_ms = 0; waited_ms < kStartWaitMs; waited_ms += 10) {
      if (server::control(RequestKind::kStatus)) return 0;
      if (waited_ms > 0 && waited_ms % 500 == 0) server::start_server();
      ::usleep(10 * 1000);
    }
    std::fprintf(stderr, "lexpack: error: the server started but did not answer within %d s\n",
                 kStartWaitMs / 1000);
    return 1;
  }
  // A server the compiles skip for now: the user is told which and why.
  auto print_mark = [] {
    if (std::string mark = server::unavailable_mark(); !mark.empty()) {
      std::printf("%s\n", mark.c_str());
    }
  };
  RequestKind kind = a.stop         ? RequestKind::kStop
                     : a.drop_trust ? RequestKind::kDropTrust
                                    : RequestKind::kStatus;
  std::optional<server::Reply> reply = server::control(kind);
  if (!reply) {
    std::printf("no server running\n");
    print_mark();
    return a.stop ? 0 : 1;
  }
  if (reply->kind == server::ReplyKind::kIncompatible) {
    std::printf("a server of another lexpack binary was running; it is leaving\n");
    return a.stop ? 0 : 1;
  }
  std::fputs(reply->info.c_str(), stdout);
  if (!reply->info.empty() && reply->info.back() != '\n') std::fputc('\n', stdout);
  print_mark();
  return 0;
}

}  // namespace

void add_server_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ServerArgs>();
  CLI::App* sub = app.add_subcommand(
      "server", "The per-user server that answers hits from memory (on unless LEXPACK_SERVER=0)");
  sub->add_flag("--start", args->start, "Start the server in the background");
  sub->add_flag("--stop", args->stop, "Stop the running server");
  sub->add_flag("--status", args->status, "Print the running server's state (the default)");
  sub->add_flag("--run", args->run, "Run the server in the foreground");
  sub->add_option("--idle", args->idle, "With --run: seconds of idleness before it leaves");
  sub->add_flag("--drop-trust", args->drop_trust,
                "Forget everything the server trusts, as on an inotify queue overflow");
  sub->callback([args, exit_code] { *exit_code = run_server_command(*args); });
}

}  // namespace lexpack::cli
