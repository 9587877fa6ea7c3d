// A miss: run the compiler (with a depfile of lexpack's own when the command
// has none), self-check what it read, and store the outputs of a successful
// compile under the action key, relocated under base_dir where no output names
// the checkout.
#include <unordered_map>

#include "closure/pch_maker.h"
#include "closure/remote_memo.h"
#include "compiler/derived_search_list.h"
#include "launcher/launcher_impl.h"

namespace lexpack::launcher::detail {
namespace {

// True when `bytes` names a path under `dir` (whole component).
bool names_dir(std::string_view bytes, std::string_view dir) {
  for (size_t at = bytes.find(dir); at != std::string_view::npos; at = bytes.find(dir, at + 1)) {
    size_t end = at + dir.size();
    if (end == bytes.size() || bytes[end] == '/' || bytes[end] == '\0') return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> Launcher::compile_argv(std::string* own_depfile) {
  std::vector<std::string> run_argv = argv_;
  if (!cmd_.wants_depfile) {
    *own_depfile = own_depfile_path();
    for (const char* a : {"-MD", "-MF"}) run_argv.push_back(a);
    run_argv.push_back(*own_depfile);
  }
  return run_argv;
}

LaunchResult Launcher::compile_and_store() {
  std::string own_depfile;
  std::optional<TempFileGuard> depfile_guard;
  served_reads::ServedReads served;
  bool serving = false;
  MissTimes times;
  LaunchResult r;
  base::ProcessResult p;
  if (early_) {
    times.before_compile = early_->started_us;
    own_depfile = early_->own_depfile;
    p = finish_early_compile();
  } else {
    std::vector<std::string> run_argv = compile_argv(&own_depfile);
    if (!own_depfile.empty()) depfile_guard.emplace(own_depfile);
    serving = serve_reads(&served);
    times.before_compile = elapsed_us();
    p = run_compiler(std::move(run_argv), served, &serving, &r.warning);
  }
  times.after_compile = elapsed_us();
  const FinishedRunWords words{
      "compile_failed", "compiler failed (exit " + std::to_string(p.exit_code) + "), not cached",
      "misses", "cache read-only, result not stored"};
  std::optional<std::string> why = take_finished_run(
      p, read_only_, words,
      [this](std::string_view name) {
        count(name);
        if (name == "misses") {
          ninja_integration::note_miss_cause(miss_cause_);
          ninja_integration::note_build_miss(base::absolute_path(cmd_.output, cwd_),
                                             miss_cause_.empty() ? "other" : miss_cause_);
        }
      },
      &r);
  r.compiled = p.started;
  if (!why) {
    const std::string& depfile = own_depfile.empty() ? cmd_.depfile : own_depfile;
    why = check_and_store(depfile, p, r, serving ? &served : nullptr, times);
  }
  finish_run(own_depfile, *why, [this](const std::string& line) { note(line); });
  return r;
}

// Served reads: the compiler reads the closure from the packs, so the bytes
// it compiles are the bytes hashed into the key.
bool Launcher::serve_reads(served_reads::ServedReads* served) {
  if (!env_flag("LEXPACK_SERVE_READS") || read_only_) return false;
  std::string plugin = base::find_plugin(base::self_executable());
  if (plugin.empty()) {
    note("reads not served: the plugin was not found");
    return false;
  }
  if (base::Status prepared = served->prepare(store_.get(), closure_, cwd_, plugin);
      !prepared.ok()) {
    note("reads not served: " + prepared.message());
    return false;
  }
  note("serving reads: " + std::to_string(served->files()) + " files (" +
       std::to_string(served->stored()) + " newly stored), " + std::to_string(served->missing()) +
       " missing paths, " + std::to_string(served->skipped()) + " left to the filesystem");
  return true;
}

base::ProcessResult Launcher::run_compiler(std::vector<std::string> run_argv,
                                           const served_reads::ServedReads& served, bool* serving,
                                           std::string* warning) {
  // prefix_command (distcc, icecc) runs the compile elsewhere; the key and
  // the outputs are the same.
  run_argv.insert(run_argv.begin(), prefix_.begin(), prefix_.end());
  base::ProcessResult p = base::run_captured(run_argv, false, *serving ? &served.env() : nullptr);
  if (!p.started && !prefix_.empty()) {
    // A bad setting is reported and ignored: a prefix that cannot run (not
    // installed, not executable) must not fail the build.
    *warning = "prefix_command ignored: " + p.error;
    note(*warning + "; compiling without it");
    count("prefix_command_failed");
    run_argv.erase(run_argv.begin(), run_argv.begin() + std::ptrdiff_t(prefix_.size()));
    p = base::run_captured(run_argv, false, *serving ? &served.env() : nullptr);
  }
  if (*serving && (!p.started || p.exit_code != 0)) {
    // Whatever went wrong, serving must not be why a compile fails: the
    // compiler runs again reading the filesystem, and that run is the answer.
    note("compile with served reads failed (exit " + std::to_string(p.exit_code) +
         "); running it again without");
    count("served_compile_retried");
    p = base::run_captured(run_argv, false, nullptr);
    *serving = false;
  }
  return p;
}

std::string Launcher::closure_file_changed(const SelfCheckResult& check) const {
  // A file the depfile names was stat-ed after the compile by the check:
  // a closure file spelled the same is not asked again.
  std::unordered_map<std::string_view, const base::StatSignature*> after;
  after.reserve(check.named.size());
  for (const auto& [path, sig] : check.named) after.emplace(path, &sig);
  for (const closure::ClosureFile& f : closure_.files) {
    base::StatSignature now;
    bool there = true;
    if (auto it = after.find(f.path); it != after.end()) {
      now = *it->second;
    } else {
      there = base::stat_file(std::string(f.path), &now);
    }
    if (!there || !(now == f.stat)) return std::string(f.path);
  }
  return {};
}

std::string Launcher::check_and_store(const std::string& depfile, const base::ProcessResult& p,
                                      const LaunchResult& r,
                                      const served_reads::ServedReads* served, MissTimes times) {
  base::Result<std::string> depfile_bytes = base::read_file(depfile);
  if (!depfile_bytes.ok()) return "not stored: " + depfile_bytes.message();
  // The depfile against the closure, then each closure file after the compile.
  SelfCheckResult check;
  std::string changed;
  auto check_closure = [&] {
    check = self_check(*depfile_bytes, closure_, list_, files_.get(), cwd_);
    changed = check.unsure.empty() ? closure_file_changed(check) : std::string();
  };
  check_closure();
  // The server that evaluated the closure of a compile started early
  // checked only its directories: a file it had kept may have changed
  // unheard before the compile. Asked again, it walks anew; the result is
  // stored under the new key when that closure holds (the checks below).
  if (!changed.empty() && early_ && memo_stored_elsewhere_) {
    note("closure file changed since the server read it: " + changed + "; asked again");
    if (closure_from_elsewhere(elsewhere_tu_, true)) {
      token_key_.reset();
      find_token_key();  // of the new closure
      check_closure();
    }
  }
  times.check_us = elapsed_us() - times.after_compile;
  if (!check.disagreements.empty()) {
    count("scanner_disagreements", int64_t(check.disagreements.size()));
    for (const std::string& d : check.disagreements) {
      note("scanner disagreement: the compiler read " + d + " which the scan of " + cmd_.source +
           " did not reach");
    }
  }
  if (!check.unsure.empty()) return "not stored: " + check.unsure;
  if (!changed.empty()) return "not stored: " + changed + " changed during the compile";
  if (early_) {
    if (std::string path = changed_since_early_start(check.outside); !path.empty()) {
      count("early_compiles_not_stored");
      return "not stored: " + path + " changed after the compile started, before its key was made";
    }
  }
  // What the plugin served came unchecked from the packs: prove it now.
  if (std::string why; served && !served->served_bytes_intact(&why)) {
    count("served_bytes_changed");
    return "not stored: " + why;
  }
  return store_outputs(*depfile_bytes, check.payload, p, r, times);
}

std::string Launcher::store_outputs(const std::string& depfile_bytes, const ActionPayload& payload,
                                    const base::ProcessResult& p, const LaunchResult& r,
                                    const MissTimes& times) {
  // A relocated key is shared by other checkouts: nothing stored under it may
  // name this one, except text written back relocated. A result that does
  // (`pinned` says why) is stored under a key of this working directory
  // only, its text as written, and found there after the relocated key.
  MissOutputs outputs;
  outputs.depfile = depfile_bytes;
  outputs.out = r.out;
  outputs.err = r.err;
  std::string pinned;
  if (relocation_.relocated) {
    if (!payload.extra_files.empty() || !payload.present_probes.empty() ||
        !payload.absent_probes.empty()) {
      count("not_relocatable");
      return "not stored: the compiler read files outside the scan (relocated key)";
    }
    if (!relocate_depfile(depfile_bytes, base_dir_, cwd_, &outputs.depfile) ||
        !base::relocate_text(r.out, base_dir_, cwd_, &outputs.out) ||
        !base::relocate_text(r.err, base_dir_, cwd_, &outputs.err)) {
      pinned = "the depfile or messages name " + base_dir_ + " in a form that cannot be relocated";
    }
  }
  base::Result<std::string> object_bytes = base::read_file(cmd_.output);
  if (!object_bytes.ok()) return "not stored: " + object_bytes.message();
  outputs.object = std::move(*object_bytes);
  if (cmd_.split_dwarf) {
    if (base::Result<std::string> dwo_bytes = base::read_file(cmd_.dwo_output); dwo_bytes.ok()) {
      outputs.dwo = std::move(*dwo_bytes);
    }
  }
  if (relocation_.relocated && pinned.empty()) pinned = outputs_naming_base_dir(outputs);
  if (!pinned.empty()) {
    count("not_relocatable");
    note("not relocatable: " + pinned + "; stored for this working directory only");
    outputs.depfile = depfile_bytes;
    outputs.out = r.out;
    outputs.err = r.err;
    for (const std::string* text : {&outputs.depfile, &outputs.out, &outputs.err}) {
      if (text->find(base::kRelocationMarker) != std::string::npos) {
        return "not stored: the compiler's text holds lexpack's relocation marker";
      }
    }
  }
  cache::ActionRecord action;
  action.exit_code = 0;
  // CPU time, not wall time: with every core busy the wall time of one
  // compile grows with the others, and a sum of those exceeds the build.
  action.compile_time_us = p.cpu_us;
  ActionPayload kept = payload;
  kept.pch_maker = closure::pch_maker_key(identity_, cmd_, cwd_, closure_, relocation_);
  action.payload = encode_payload(kept);
  if (std::string why = put_outputs(outputs, &action); !why.empty()) return why;
  cache::Hash128 key = uses_date_ ? closure::dated_key(key_) : key_;
  if (!pinned.empty()) key = closure::pinned_key(key, cwd_);
  base::Status stored = store_->put_action(key, action);
  if (!stored.ok()) return "not stored: " + stored.message();
  ninja_integration::note_build_use(key);
  if (pinned.empty()) store_under_token_key(action, r);
  // outputs[0] is the object (put_outputs): its blob id is its bytes' hash.
  closure::note_pch_maker(store_.get(), action.outputs[0].blob, kept.pch_maker);
  store_->put_memo("last", base::absolute_path(cmd_.output, cwd_), encode_args(cmd_));
  upload_outputs(key, action, std::move(outputs));
  return "stored " + key.hex() + " (lexpack " +
         std::to_string(times.before_compile + elapsed_us() - times.after_compile) + " us, CPU " +
         std::to_string(base::own_cpu_us()) + " us: scan " + std::to_string(times.before_compile) +
         ", check " + std::to_string(times.check_us) + ", compiler " +
         std::to_string(p.elapsed_us) + " us)";
}

std::string Launcher::outputs_naming_base_dir(const MissOutputs& outputs) {
  if (names_dir(outputs.object, base_dir_)) {
    // Every path the compiler records is mapped already: this one comes
    // from the text (a string literal, a macro's value), which no map
    // rewrites.
    return "the object names a path under " + base_dir_ +
           " that no prefix map rewrites (in a string of the source or a header)";
  }
  if (outputs.dwo && names_dir(*outputs.dwo, base_dir_)) {
    return "the .dwo names a path under " + base_dir_;
  }
  return {};
}

std::string Launcher::put_outputs(const MissOutputs& outputs, cache::ActionRecord* action) {
  std::string err;
  cache::ActionRecord::Output object{"object", {}};
  if (!put_output_blob(store_.get(), outputs.object, &object.blob, &err) || object.blob.is_zero()) {
    return "not stored: " + err;
  }
  action->outputs.push_back(object);
  if (outputs.dwo) {
    cache::ActionRecord::Output dwo{"dwo", {}};
    if (!put_output_blob(store_.get(), *outputs.dwo, &dwo.blob, &err)) return "not stored: " + err;
    if (!dwo.blob.is_zero()) action->outputs.push_back(dwo);
  }
  if (cmd_.wants_depfile) {
    cache::ActionRecord::Output dep{"depfile", {}};
    if (!put_output_blob(store_.get(), outputs.depfile, &dep.blob, &err) || dep.blob.is_zero()) {
      return "not stored: empty depfile";
    }
    action->outputs.push_back(dep);
  }
  if (!put_output_blob(store_.get(), outputs.out, &action->stdout_blob, &err) ||
      !put_output_blob(store_.get(), outputs.err, &action->stderr_blob, &err)) {
    return "not stored: " + err;
  }
  return {};
}

void Launcher::upload_outputs(const cache::Hash128& key, const cache::ActionRecord& action,
                              MissOutputs outputs) {
  if (!remote_) return;
  // The closure's memo goes with the entry: another checkout that finds what
  // it names takes it instead of evaluating the closure (remote_memo.h).
  std::optional<std::string> memo;
  if (have_closure_ && remote_->can_write()) {
    memo = closure::encode_remote_memo(
        closure_, list_, relocation_, key_,
        compiler::shareable_base_answer(store_.get(), identity_, cmd_, cwd_));
  }
  const cache::Hash128 memo_key = closure::remote_memo_key(identity_, cmd_, cwd_, base_dir_);
  std::string what;
  cache::remote::queue_or_send(
      *store_, *remote_, key, memo_key, memo ? std::string_view(*memo) : std::string_view(),
      [&]() -> std::optional<cache::remote::RemoteEntry> {
        cache::remote::RemoteEntry entry;
        entry.compile_time_us = action.compile_time_us;
        entry.payload = action.payload;
        entry.outputs.push_back({"object", std::move(outputs.object)});
        if (outputs.dwo) entry.outputs.push_back({"dwo", std::move(*outputs.dwo)});
        if (cmd_.wants_depfile) entry.outputs.push_back({"depfile", outputs.depfile});
        entry.out = outputs.out;
        entry.err = outputs.err;
        return entry;
      },
      [this](std::string_view n, int64_t d) { count(n, d); }, &what);
  if (!what.empty()) note(what);
}

// The depfile lexpack asks for when the command has none: in the cache's
// tmp/, which clear and gc sweep if this process is killed, never beside the
// output, where nothing would clean it; the system's temporary directory for
// a read-only cache.
std::string Launcher::own_depfile_path() {
  if (store_ && !read_only_) {
    auto made = store_->make_temp(".d");
    if (made.ok()) return *made;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/lexpack-XXXXXX.d";
  int fd = ::mkostemps(pattern.data(), 2, O_CLOEXEC);
  if (fd >= 0) ::close(fd);
  return pattern;
}

}  // namespace lexpack::launcher::detail
