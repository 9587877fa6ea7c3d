// A miss: run the compiler (with a depfile of lexpack's own when the command
// has none), self-check what it read, and store the outputs of a successful
// compile under the action key, relocated under base_dir where no output names
// the checkout.
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

LaunchResult Launcher::compile_and_store() {
  std::vector<std::string> run_argv = argv_;
  std::string own_depfile;
  if (!cmd_.wants_depfile) {
    own_depfile = own_depfile_path();
    for (const char* a : {"-MD", "-MF"}) run_argv.push_back(a);
    run_argv.push_back(own_depfile);
  }
  std::optional<TempFileGuard> depfile_guard;
  if (!own_depfile.empty()) depfile_guard.emplace(own_depfile);
  // Served reads: the compiler reads the closure from the packs, so the bytes
  // it compiles are the bytes hashed into the key.
  served_reads::ServedReads served;
  bool serving = false;
  if (env_flag("LEXPACK_SERVE_READS") && !read_only_) {
    std::string plugin = base::find_plugin(base::self_executable());
    if (plugin.empty()) {
      note("reads not served: the plugin was not found");
    } else if (base::Status prepared = served.prepare(store_.get(), closure_, cwd_, plugin);
               !prepared.ok()) {
      note("reads not served: " + prepared.message());
    } else {
      serving = true;
      note("serving reads: " + std::to_string(served.files()) + " files (" +
           std::to_string(served.stored()) + " newly stored), " + std::to_string(served.missing()) +
           " missing paths, " + std::to_string(served.skipped()) + " left to the filesystem");
    }
  }
  // prefix_command (distcc, icecc) runs the compile elsewhere; the key and
  // the outputs are the same.
  run_argv.insert(run_argv.begin(), prefix_.begin(), prefix_.end());
  int64_t before_compile = elapsed_us();
  base::ProcessResult p = base::run_captured(run_argv, false, serving ? &served.env() : nullptr);
  std::string warning;
  if (!p.started && !prefix_.empty()) {
    // A bad setting is reported and ignored: a prefix that cannot run (not
    // installed, not executable) must not fail the build.
    warning = "prefix_command ignored: " + p.error;
    note(warning + "; compiling without it");
    count("prefix_command_failed");
    run_argv.erase(run_argv.begin(), run_argv.begin() + std::ptrdiff_t(prefix_.size()));
    p = base::run_captured(run_argv, false, serving ? &served.env() : nullptr);
  }
  if (serving && (!p.started || p.exit_code != 0)) {
    // Whatever went wrong, serving must not be why a compile fails: the
    // compiler runs again reading the filesystem, and that run is the answer.
    note("compile with served reads failed (exit " + std::to_string(p.exit_code) +
         "); running it again without");
    count("served_compile_retried");
    p = base::run_captured(run_argv, false, nullptr);
    serving = false;
  }
  int64_t after_compile = elapsed_us();
  int64_t check_us = 0;
  LaunchResult r;
  r.exit_code = p.exit_code;
  r.out = std::move(p.out);
  r.err = std::move(p.err);
  r.warning = std::move(warning);
  auto finish = [&](std::string why) {
    if (!own_depfile.empty()) ::unlink(own_depfile.c_str());
    if (!why.empty()) note(why);
    return r;
  };
  if (!p.started) {
    r.error = p.error;
    r.exit_code = 127;
    return finish("");
  }
  if (p.exit_code != 0) {
    count("compile_failed");
    return finish("compiler failed (exit " + std::to_string(p.exit_code) + "), not cached");
  }
  count("misses");
  if (read_only_) return finish("cache read-only, result not stored");

  const std::string& depfile = own_depfile.empty() ? cmd_.depfile : own_depfile;
  base::Result<std::string> depfile_bytes = base::read_file(depfile);
  if (!depfile_bytes.ok()) return finish("not stored: " + depfile_bytes.message());
  SelfCheckResult check = self_check(*depfile_bytes, closure_, list_, files_.get(), cwd_);
  check_us = elapsed_us() - after_compile;
  if (!check.disagreements.empty()) {
    count("scanner_disagreements", int64_t(check.disagreements.size()));
    for (const std::string& d : check.disagreements) {
      note("scanner disagreement: the compiler read " + d + " which the scan of " + cmd_.source +
           " did not reach");
    }
  }
  if (!check.unsure.empty()) return finish("not stored: " + check.unsure);
  for (const closure::ClosureFile& f : closure_.files) {
    base::StatSignature now;
    std::string path(f.path);
    if (!base::stat_file(path, &now) || !(now == f.stat)) {
      return finish("not stored: " + path + " changed during the compile");
    }
  }
  // What the plugin served came unchecked from the packs: prove it now.
  if (std::string why; serving && !served.served_bytes_intact(&why)) {
    count("served_bytes_changed");
    return finish("not stored: " + why);
  }

  // A relocated key is shared by other checkouts: nothing stored under it may
  // name this one, except text written back relocated. A result that does
  // (`pinned` says why) is stored under a key of this working directory
  // only, its text as written, and found there after the relocated key.
  std::string stored_depfile = *depfile_bytes, stored_out = r.out, stored_err = r.err;
  std::string pinned;
  if (relocation_.relocated) {
    if (!check.payload.extra_files.empty() || !check.payload.present_probes.empty() ||
        !check.payload.absent_probes.empty()) {
      count("not_relocatable");
      return finish("not stored: the compiler read files outside the scan (relocated key)");
    }
    if (!relocate_depfile(*depfile_bytes, base_dir_, cwd_, &stored_depfile) ||
        !base::relocate_text(r.out, base_dir_, cwd_, &stored_out) ||
        !base::relocate_text(r.err, base_dir_, cwd_, &stored_err)) {
      pinned = "the depfile or messages name " + base_dir_ + " in a form that cannot be relocated";
    }
  }
  cache::ActionRecord action;
  action.exit_code = 0;
  // CPU time, not wall time: with every core busy the wall time of one
  // compile grows with the others, and a sum of those exceeds the build.
  action.compile_time_us = p.cpu_us;
  action.payload = encode_payload(check.payload);
  std::string err;
  auto put = [&](std::string_view bytes, cache::BlobId* id, bool aligned) -> bool {
    if (bytes.empty()) return true;
    cache::BlobOptions options;
    options.page_aligned = aligned;
    auto stored = store_->put_blob(bytes, options);
    if (!stored.ok()) {
      err = stored.message();
      return false;
    }
    *id = stored.value();
    return true;
  };
  base::Result<std::string> object_bytes = base::read_file(cmd_.output);
  if (!object_bytes.ok()) return finish("not stored: " + object_bytes.message());
  base::Result<std::string> dwo_bytes =
      cmd_.split_dwarf ? base::read_file(cmd_.dwo_output) : base::Status::error("no .dwo");
  if (relocation_.relocated && pinned.empty() && names_dir(*object_bytes, base_dir_)) {
    // Every path the compiler records is mapped already: this one comes
    // from the text (a string literal, a macro's value), which no map
    // rewrites.
    pinned = "the object names a path under " + base_dir_ +
             " that no prefix map rewrites (in a string of the source or a header)";
  }
  if (relocation_.relocated && pinned.empty() && dwo_bytes.ok() &&
      names_dir(*dwo_bytes, base_dir_)) {
    pinned = "the .dwo names a path under " + base_dir_;
  }
  if (!pinned.empty()) {
    count("not_relocatable");
    note("not relocatable: " + pinned + "; stored for this working directory only");
    stored_depfile = *depfile_bytes;
    stored_out = r.out;
    stored_err = r.err;
    for (const std::string* text : {&stored_depfile, &stored_out, &stored_err}) {
      if (text->find(base::kRelocationMarker) != std::string::npos) {
        return finish("not stored: the compiler's text holds lexpack's relocation marker");
      }
    }
  }
  cache::ActionRecord::Output object{"object", {}};
  if (!put(*object_bytes, &object.blob, false) || object.blob.is_zero()) {
    return finish("not stored: " + err);
  }
  action.outputs.push_back(object);
  if (dwo_bytes.ok()) {
    cache::ActionRecord::Output dwo{"dwo", {}};
    if (!put(*dwo_bytes, &dwo.blob, false)) return finish("not stored: " + err);
    if (!dwo.blob.is_zero()) action.outputs.push_back(dwo);
  }
  if (cmd_.wants_depfile) {
    cache::ActionRecord::Output dep{"depfile", {}};
    if (!put(stored_depfile, &dep.blob, false) || dep.blob.is_zero()) {
      return finish("not stored: empty depfile");
    }
    action.outputs.push_back(dep);
  }
  if (!put(stored_out, &action.stdout_blob, false) ||
      !put(stored_err, &action.stderr_blob, false)) {
    return finish("not stored: " + err);
  }
  cache::Hash128 key = uses_date_ ? closure::dated_key(key_) : key_;
  if (!pinned.empty()) key = closure::pinned_key(key, cwd_);
  base::Status stored = store_->put_action(key, action);
  if (!stored.ok()) return finish("not stored: " + stored.message());
  note_build_use(key);
  store_->put_memo("last", base::absolute_path(cmd_.output, cwd_), encode_args(cmd_));
  if (remote_ && cache::remote::queue_upload(key)) {
    note("queued for the build's uploader");
  } else if (remote_) {
    // Not under `lexpack ninja`: upload here, after the outputs are in place.
    cache::remote::RemoteEntry entry;
    entry.compile_time_us = action.compile_time_us;
    entry.payload = action.payload;
    entry.outputs.push_back({"object", std::move(*object_bytes)});
    if (dwo_bytes.ok()) entry.outputs.push_back({"dwo", std::move(*dwo_bytes)});
    if (cmd_.wants_depfile) entry.outputs.push_back({"depfile", stored_depfile});
    entry.out = stored_out;
    entry.err = stored_err;
    std::string what;
    remote_->upload(
        key, entry, [this](std::string_view n, int64_t d) { count(n, d); }, &what);
    if (!what.empty()) note(what);
  }
  return finish("stored " + key.hex() + " (lexpack " +
                std::to_string(before_compile + elapsed_us() - after_compile) + " us: scan " +
                std::to_string(before_compile) + ", check " + std::to_string(check_us) +
                ", compiler " + std::to_string(p.elapsed_us) + " us)");
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
