// A compile started before its key, where the answer is known to be a miss:
// the translation unit's own source changed in its directives (its kept
// closure does not apply, so the closure is evaluated again), or it was never
// compiled with these arguments, and no remote can hold its entry. The
// compiler runs from the start; the key is made beside it (here or by the
// server). The result is stored only when no file the key rests on was
// stamped at or after the compile's start on the file clock: such a file may
// have been read by the compiler in one state and by the key in another.
// When the key turns out to have an entry after all (an edit undone), the
// compiler's process group is stopped and the entry served.
#include <signal.h>

#include <algorithm>

#include "launcher/launcher_impl.h"

namespace lexpack::launcher::detail {
namespace {

// The process group of the compile running early, for the signal handler:
// an interrupted build (ninja's SIGINT to this process's group, a SIGTERM)
// stops the compile too, which runs in a group of its own.
std::atomic<int> g_early_group{0};
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

void forward_and_die(int sig) {
  const int group = g_early_group.load();
  if (group > 0) ::kill(-group, sig);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void set_forwarding(bool on) {
  for (int sig : kForwarded) {
    struct sigaction action {};
    action.sa_handler = on ? forward_and_die : SIG_DFL;
    ::sigemptyset(&action.sa_mask);
    ::sigaction(sig, &action, nullptr);
  }
}

}  // namespace

EarlyCompile::~EarlyCompile() {
  if (thread.joinable()) thread.join();
  g_early_group.store(0);
  set_forwarding(false);
}

bool Launcher::early_compile_applies() const {
  if (explain_ || read_only_ || remote_ || !prefix_.empty() || cmd_.makes_pch ||
      env_flag("LEXPACK_SERVE_READS")) {
    return false;
  }
  if (const char* v = std::getenv("LEXPACK_COMPILE_EARLY"); v && std::string_view(v) == "0") {
    return false;
  }
  return never_compiled_ || source_changed_;
}

void Launcher::start_early_compile() {
  auto early = std::make_unique<EarlyCompile>();
  std::vector<std::string> run_argv = compile_argv(&early->own_depfile);
  if (!early->own_depfile.empty()) early->depfile_guard.emplace(early->own_depfile);
  // Files stamped from the compile's start on may have changed after the
  // compiler read them. The start is the file clock's next tick (at most a
  // few milliseconds away): a file written just before, within the current
  // tick (a test, a generator, a fast editor), is not refused for it.
  early->file_clock = base::next_file_clock_tick_ns();
  early->started_us = elapsed_us();
  set_forwarding(true);
  EarlyCompile* e = early.get();
  e->thread = std::thread([e, run_argv = std::move(run_argv)] {
    base::RunOptions options;
    options.own_group = true;
    options.pid = &g_early_group;
    e->result = base::run_captured(run_argv, true, nullptr, options);
  });
  early_ = std::move(early);
  note(std::string("compiling at once (") +
       (never_compiled_ ? "never compiled with these arguments"
                        : "the source's directives changed") +
       "), the key made beside it");
}

base::ProcessResult Launcher::finish_early_compile() {
  early_->thread.join();
  return std::move(early_->result);
}

void Launcher::stop_early_compile() {
  if (const int group = g_early_group.load(); group > 0) ::kill(-group, SIGTERM);
  early_->thread.join();
  if (!early_->own_depfile.empty()) ::unlink(early_->own_depfile.c_str());
  note("compile started at once stopped: an entry may serve it");
  early_.reset();
}

void Launcher::settle_early_compile(const cache::Hash128& key) {
  // The token key is wanted either way: the result is kept under it too, so
  // that a comment edited later finds it.
  find_token_key();
  if (store_->get_action(key) || (token_key_ && store_->get_action(*token_key_)) ||
      (!base_dir_.empty() && store_->get_action(closure::pinned_key(key, cwd_)))) {
    stop_early_compile();
  }
}

LaunchResult Launcher::early_result(std::string_view why) {
  base::ProcessResult p = finish_early_compile();
  // A passthrough as any other: the compile ran as the build wrote it, and
  // nothing is stored.
  note("passthrough: " + std::string(why) + " (the compiler ran from the start)");
  if (!early_->own_depfile.empty()) ::unlink(early_->own_depfile.c_str());
  LaunchResult r;
  if (!p.started) {
    r.error = p.error;
    r.exit_code = 127;
    return r;
  }
  r.exit_code = p.exit_code;
  r.out = std::move(p.out);
  r.err = std::move(p.err);
  return r;
}

std::string Launcher::changed_since_early_start(const ActionPayload& payload) const {
  const int64_t start = early_->file_clock;
  auto young = [start](const base::StatSignature& s) {
    return std::max(s.mtime_ns, s.ctime_ns) >= start;
  };
  for (const closure::ClosureFile& f : closure_.files) {
    if (young(f.stat)) return std::string(f.path);
  }
  std::vector<std::string> outside = payload.present_probes;
  for (const ActionPayload::ExtraFile& f : payload.extra_files) outside.push_back(f.path);
  for (const std::string& path : outside) {
    base::StatSignature sig;
    if (!base::stat_file(path, &sig) || young(sig)) return path;
  }
  return {};
}

}  // namespace lexpack::launcher::detail
