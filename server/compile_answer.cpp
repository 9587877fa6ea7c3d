// A compile answered from memory: its entry still trusted, its action record
// and blobs in the store, its outputs written under temporary names for the
// client to rename, or the reason it is declined (the launcher then runs).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>

#include "base/file_util.h"
#include "closure/action_key.h"
#include "launcher/action_payload.h"
#include "launcher/decision_log.h"
#include "launcher/relocated_text.h"
#include "ninja_integration/build_record.h"
#include "server/server_state.h"

namespace lexpack::server {

bool Server::still_trusted(Entry* e, std::string* why) {
  for (const WatchTable::Linked& l : e->linked) {
    base::StatSignature now;
    if (!base::stat_file(l.path, &now) || !(now == l.stat)) {
      e->trusted = false;
      *why = "a file with several links changed: " + l.path;
      return false;
    }
  }
  if (!compiler::same_dirs_hold(e->same_dirs)) {
    e->trusted = false;
    *why = "a search dir the compiler dropped is no longer the directory it kept";
    return false;
  }
  // Not on inotify's word alone for long: a write through a shared mapping
  // raises no event (only the mtime tells).
  if (!rechecked(e)) {
    *why = "a file changed without an inotify event (written through a shared mapping?)";
    return false;
  }
  return true;
}

std::optional<cache::ActionRecord> Server::cached_action(const Entry& e, const std::string& cwd,
                                                         cache::Hash128* key) {
  // __DATE__ is the date in the client's time zone (TZ, applied by
  // apply_client): localtime_r() reads TZ only once per process unless told
  // it changed.
  if (e.uses_date) ::tzset();
  *key = e.uses_date ? closure::dated_key(e.action_key) : e.action_key;
  std::optional<cache::ActionRecord> action = store_->get_action(*key);
  if (!action && !client_base_dir().empty()) {
    const cache::Hash128 pinned = closure::pinned_key(*key, cwd);  // see pinned_key
    action = store_->get_action(pinned);
    if (action) *key = pinned;
  }
  return action;
}

bool Server::restore_messages(const cache::ActionRecord& action, const std::string& cwd,
                              std::string* out_text, std::string* err_text, std::string* why) {
  auto blob = [this](const cache::BlobId& b) -> std::optional<std::string_view> {
    if (b.is_zero()) return std::string_view();
    return store_->get_blob(b);
  };
  std::optional<std::string_view> out = blob(action.stdout_blob);
  std::optional<std::string_view> err = blob(action.stderr_blob);
  if (!out || !err) {
    *why = "output blobs missing";
    return false;
  }
  // Text stored relocated (a base_dir entry) comes back naming this checkout.
  if (!launcher::restore_paths(*out, cwd, out_text) ||
      !launcher::restore_paths(*err, cwd, err_text)) {
    *why = "cached messages hold a malformed relocated path";
    return false;
  }
  return true;
}

bool Server::place_outputs(const compiler::CompileCommand& cmd, const cache::ActionRecord& action,
                           const Request& req, std::vector<std::string>* temps, Reply* hit,
                           std::string* why) {
  const bool dry = temps == nullptr;
  bool have_object = false, have_depfile = false;
  std::string depfile_text;
  for (const auto& o : action.outputs) {
    std::string target;
    if (o.role == "object") {
      target = cmd.output;
      have_object = true;
    } else if (o.role == "dwo" && cmd.split_dwarf) {
      target = cmd.dwo_output;
    } else if (o.role == "depfile" && cmd.wants_depfile) {
      target = cmd.depfile;
      have_depfile = true;
    } else {
      continue;
    }
    std::optional<std::string_view> bytes = store_->get_blob(o.blob);
    if (!bytes) {
      *why = "output blob missing";
      return false;
    }
    if (o.role == "depfile") {
      if (!launcher::restore_depfile(*bytes, req.cwd, &depfile_text)) {
        *why = "cached depfile holds a malformed relocated path";
        return false;
      }
      bytes = depfile_text;
    }
    if (dry) continue;
    std::string final_path = base::absolute_path(target, req.cwd);
    std::string temp;
    // Objects are stamped as written, to be vouched for once renamed.
    std::optional<launcher::Stamped> stamp;
    std::optional<launcher::Stamped>* stamped =
        o.role != "depfile" && !o.blob.is_zero() ? &stamp : nullptr;
    if (!spares_.take(final_path, *bytes, req.umask, &temp, stamped)) {
      temp = final_path + ".lexpack-server-" + std::to_string(::getpid()) + "-" +
             std::to_string(++temp_counter_);
      if (!write_new_file(temp, *bytes, stamped)) {
        *why = "cannot write " + temp;
        return false;
      }
    }
    temps->push_back(temp);
    hit->renames.push_back({temp, final_path});
    if (stamp) stamped_.push_back({base::normal_path(final_path, req.cwd), *stamp, o.blob});
    // The output this hit replaces gets a second name, removed with the
    // temporaries once the client answered: the client's removal of the old
    // output then frees no blocks (ext4 truncating an object took a third of
    // the client's CPU); the server does that after the client is gone.
    struct stat old {};
    if (::lstat(final_path.c_str(), &old) == 0 && S_ISREG(old.st_mode) && old.st_nlink == 1) {
      std::string aside = final_path + ".lexpack-server-" + std::to_string(::getpid()) + "-" +
                          std::to_string(++temp_counter_) + "-old";
      if (::link(final_path.c_str(), aside.c_str()) == 0) temps->push_back(aside);
    }
  }
  if (!have_object || (cmd.wants_depfile && !have_depfile)) {
    *why = "outputs incomplete";
    return false;
  }
  return true;
}

void Server::vouch(std::vector<PendingHit::Output> renamed, bool now) {
  for (PendingHit::Output& o : renamed) to_vouch_.push_back(std::move(o));
  if (!now) return;
  std::vector<cache::Store::FileWrite> vouched;
  for (const PendingHit::Output& o : to_vouch_) {
    if (std::optional<base::StatSignature> sig = launcher::still_stamped(o.path, o.stamped)) {
      vouched.push_back({o.path, {*sig, o.blob, {}}});
    }
  }
  to_vouch_.clear();
  if (!vouched.empty()) (void)store_->put_records(vouched, {});
}

bool Server::evaluated_again(const Request& req, const compiler::CompileCommand& cmd,
                             const std::string& why) {
  // A header changed (a source alone changing is the launcher's: it takes
  // the closure kept with the memo, without an evaluation). Evaluated here,
  // the compile is answered in this request when an entry holds for it (a
  // comment edit, a change undone), and its launcher finds the memo stored
  // when none does.
  constexpr std::string_view kOutOfDate = "closure memo out of date: changed: ";
  if (!why.starts_with(kOutOfDate) || others_waiting()) return false;
  const std::string_view changed = std::string_view(why).substr(kOutOfDate.size());
  const std::string_view source = cmd.source;
  if (changed.substr(changed.rfind('/') + 1) == source.substr(source.rfind('/') + 1)) return false;
  return evaluate_closure(req).info == kEvaluatedAnswer;
}

Reply Server::compile(const Request& req, std::vector<std::string>* temps) {
  stamped_.clear();
  Reply miss;
  miss.kind = ReplyKind::kMiss;
  std::optional<launcher::DecisionLog> log;
  const bool dry = temps == nullptr;
  auto missed = [&](std::string why) {
    if (dry) {
      miss.kind = ReplyKind::kInfo;
      miss.info = "would decline: " + why;
      return miss;
    }
    if (log) log->write("server declined: " + why);
    ++misses_;
    last_miss_ = why;
    miss.info = std::move(why);
    return miss;
  };
  if (req.argv.empty() || req.cwd.empty() || req.cwd[0] != '/') return missed("bad request");
  if (!foreign_.empty()) {
    apply_client(req);  // its LEXPACK_LOGFILE
    if (!dry) {
      ++foreign_declines_;
      log.emplace();
      compiler::CompileCommand cmd = compiler::parse_compile_command(req.argv);
      log->set_subject(cmd.source.empty() ? cmd.compiler : cmd.source);
    }
    return missed(foreign_);
  }
  if (::chdir(req.cwd.c_str()) != 0) return missed("cannot enter the working directory");
  apply_client(req);
  drain();
  if (const char* d = std::getenv("LEXPACK_DISABLE"); d && *d && std::string_view(d) != "0") {
    return missed("LEXPACK_DISABLE is set");
  }
  compiler::CompileCommand cmd = compiler::parse_compile_command(req.argv);
  if (!dry) {
    log.emplace();  // the client's LEXPACK_LOGFILE
    log->set_subject(cmd.source.empty() ? cmd.compiler : cmd.source);
  }
  std::string why;
  std::optional<uint32_t> found = entry_of(req.cwd, cmd, client_base_dir(), &why);
  if (!found) return missed(why);
  uint32_t id = *found;
  if (!entries_[id].trusted && !dry && others_waiting()) {
    // Checking its closure now would hold up the compiles waiting behind
    // this one, which their own launchers can check in parallel: this one
    // takes the launcher's path, and the check is made when nothing waits.
    queue_trust(id, req.cwd);
    ++busy_declines_;
    return missed("busy: its closure is checked when the server is idle");
  }
  if (!entries_[id].trusted && !build_trust(id, req.cwd, &why) &&
      !(!dry && evaluated_again(req, cmd, why) && build_trust(id, req.cwd, &why))) {
    return missed(why);
  }
  if (!still_trusted(&entries_[id], &why)) return missed(why);
  cache::Hash128 key;
  std::optional<cache::ActionRecord> action = cached_action(entries_[id], req.cwd, &key);
  if (!action) return missed("no cached result for this key");
  std::string changed;
  if (action->exit_code != 0 ||
      !launcher::check_encoded_payload(action->payload, files_.get(), req.cwd, &changed) ||
      !changed.empty()) {
    return missed("cached entry unusable here");
  }
  std::string out_text, err_text;
  if (!restore_messages(*action, req.cwd, &out_text, &err_text, &why)) return missed(why);
  Reply hit;
  hit.kind = ReplyKind::kHit;
  if (!place_outputs(cmd, *action, req, temps, &hit, &why)) return missed(why);
  if (dry) {
    Reply info;
    info.kind = ReplyKind::kInfo;
    info.info =
        "would hit: answered from memory (no change reported since its closure was checked)";
    return info;
  }
  hit.out = std::move(out_text);
  hit.err = std::move(err_text);
  hit.info = std::to_string(action->compile_time_us);  // for the build's own counts
  ++hits_;
  store_->add_counter("hits", 1);
  store_->add_counter("server_hits", 1);
  store_->add_counter("time_saved_us", int64_t(action->compile_time_us));
  ninja_integration::note_build_use(key);
  if (cmd.makes_pch) launcher::note_served_pch_maker(store_.get(), *action);
  log->write("hit (server)");
  return hit;
}

}  // namespace lexpack::server
