// The closure of a compile its launcher could not take from a memo,
// evaluated by the server: the files, compiler answers and header
// evaluations it has met are kept between requests (each file by its stat
// signature, each header's evaluation by that signature and the macro state
// it read), so a header a hundred TUs include is evaluated once per state,
// not once per compile, and a fresh TU costs little more than its walk.
#include <unistd.h>

#include <set>

#include "base/file_stat.h"
#include "base/file_util.h"
#include "closure/action_key.h"
#include "closure/closure_snapshot.h"
#include "closure/dependency_closure.h"
#include "closure/key_relocation.h"
#include "closure/scan_file_cache.h"
#include "closure/token_keys.h"
#include "compiler/derived_search_list.h"
#include "launcher/launcher.h"
#include "server/server_state.h"

namespace lexpack::server {

Server::WalkShare& Server::walk_share(const std::string& source, const base::StatSignature& sig) {
  drain();  // the events read so far tell whether what is kept went stale
  const auto now = std::chrono::steady_clock::now();
  // Past kWalkShareUnchecked, a share that evaluates many closures (a
  // build under way) is made anew, as one walk costs less than checking
  // each answer; one that evaluates few (an edit now and then) is kept and
  // its answers checked.
  auto due = [&](const WalkShare& w) {
    return w.outdated || w.drops != drops_ || w.evaluated >= kEvaluationsPerShare ||
           now - w.made > kWalkShareLife ||
           (now - w.made > kWalkShareUnchecked && w.evaluated >= kCheckedEvaluations);
  };
  if (!walk_share_ || due(*walk_share_) || !keep_share_past_changes(&*walk_share_)) {
    std::optional<WalkShare> before = std::move(walk_share_);
    walk_share_.reset();
    ++walk_shares_made_;
    (void)watches_.take_changes();  // all before this share
    WalkShare& w = walk_share_.emplace();
    w.made_file_clock_ns = base::file_clock_ns();
    w.walked = std::make_shared<closure::ScanFileCache>();
    w.walked->keep_lexed();
    // One write per evaluation: the first of a big TU learns thousands of
    // records (the held bytes still bound it).
    w.learned = std::make_unique<cache::BatchingStore>(store_.get(), size_t(1) << 16);
    w.files = std::make_unique<closure::FileStates>(w.learned.get(), kernel_);
    w.files->share(w.walked.get());
    w.evaluations = std::make_unique<closure::EvaluationShare>();
    w.evaluations->use_walked(w.walked.get());
    // The header evaluations outlive the stat answers: each is keyed by its
    // files' signatures, and those it keeps had settled before they were
    // read.
    if (before && before->evaluations->header_traces() <= kMaxCarriedTraces) {
      w.evaluations->carry_headers(before->evaluations.get(), before->made_file_clock_ns);
      traces_carried_ += w.evaluations->header_traces();
    }
    w.drops = drops_;
    w.made = w.last_used = now;
  }
  WalkShare& w = *walk_share_;
  // A source changed (its node is made again from its new signature).
  if (auto it = w.sources.find(source); it != w.sources.end() && !(it->second == sig)) {
    w.walked->forget_stat(source);
    w.validate = true;
  }
  // A file no trusted closure names changes unheard of, most often between
  // builds: once the share was left unused for a moment, or is older than
  // kWalkShareUnchecked, what it answers is checked.
  if (now - w.made > kWalkShareUnchecked || now - w.last_used > kWalkShareIdle) w.validate = true;
  w.last_used = now;
  w.sources[source] = sig;
  return w;
}

bool Server::memo_holds(const std::string& memo, const std::string& cwd, bool directories_only) {
  std::string changed;
  if (directories_only) {
    return closure::check_encoded_memo_directories(memo, &changed) && changed.empty();
  }
  // Through the share's held records: the files it just read are known.
  cache::Store* store = walk_share_ ? walk_share_->learned.get() : store_.get();
  closure::FileStates files(store, kernel_);
  const closure::ContentLookup content = closure::content_lookup(&files, cwd);
  cache::Hash128 key;
  bool uses_date = false;
  return closure::check_encoded_closure_memo(memo, nullptr, &key, &uses_date, &changed, nullptr,
                                             &content) &&
         changed.empty();
}

bool Server::keep_share_past_changes(WalkShare* w) {
  // A directory's signature taken again is good only when the changes read
  // after that stat name nothing the share knows in it (their events were
  // queued before it): each round reads those, up to a few.
  for (int round = 0; round < 3; ++round) {
    if (round > 0) drain();
    if (w->drops != drops_) return false;
    WatchTable::Changes changes = watches_.take_changes();
    if (changes.unknown) return false;
    if (changes.paths.empty()) return true;
    w->validate = true;
    std::set<std::string> dirs;
    for (const WatchTable::Change& c : changes.paths) {
      if (w->sources.count(c.path) != 0) {
        // A source is walked from a node of its new signature (root_node):
        // what is kept of it is its stat answer.
        w->walked->forget_stat(c.path);
      } else if (w->walked->knows(c.path)) {
        return false;  // a header, a candidate, a directory: walked again
      }
      // A name made, removed or renamed in a directory the share knows:
      // its signature changed, and no answer kept about a name in it did.
      const std::string dir(base::dir_of(c.path));
      if (c.in_dir && c.entry && w->walked->knows(dir)) dirs.insert(dir);
    }
    if (dirs.empty()) return true;
    for (const std::string& dir : dirs) w->walked->restat_dir(dir);
    ++share_dirs_restatted_;
  }
  return false;
}

Reply Server::evaluate_closure(const Request& req) {
  Reply r;
  r.kind = ReplyKind::kInfo;
  auto declined = [&r](const std::string& why) {
    r.info = "declined: " + why;
    return r;
  };
  // What the evaluation's loads learned reaches the store before its
  // launcher is answered, whichever way this returns (a store that cannot
  // take it only forgets it).
  struct WriteLearned {
    Server* server;
    ~WriteLearned() {
      if (server->walk_share_) (void)server->walk_share_->learned->write_out();
    }
  } write_learned{this};
  if (req.argv.empty() || req.cwd.empty() || req.cwd[0] != '/') return declined("bad request");
  if (::chdir(req.cwd.c_str()) != 0) return declined("cannot enter the working directory");
  apply_client(req);
  const compiler::CompileCommand cmd = compiler::parse_compile_command(req.argv);
  if (!cmd.uncacheable.empty()) return declined("uncacheable");
  auto identity = shared_compiler_identity(store_.get(), cmd.compiler);
  if (!identity.ok() || identity->kind == compiler::CompilerKind::kUnknown) {
    return declined("compiler unknown");
  }
  if (std::string sentence;
      !compiler::refused_by_compiler(cmd, identity->kind, &sentence).empty()) {
    return declined("uncacheable");
  }
  auto list = compiler::search_list_for(store_.get(), *identity, cmd, req.cwd);
  if (!list.ok()) return declined("search list: " + list.message());
  const auto start = std::chrono::steady_clock::now();
  base::StatSignature source_sig;
  if (!base::stat_file(cmd.source, &source_sig)) return declined("cannot stat the source");
  const std::string base_dir = client_base_dir();
  std::optional<closure::Closure> closure;
  closure::KeyRelocation relocation;
  cache::Hash128 key;
  closure::ProbeDigests probes;  // the action key's, for the token key's
  std::optional<std::string> memo;
  // A share that may have gone stale (a change heard of, or none for long)
  // has its answer checked as the launcher will check it; one found stale
  // is made anew and the closure evaluated again. The launcher of a compile
  // already running checks each file of the closure after it (as the share
  // recorded it, stamped before the compile's start), and asks again
  // (kClosureAgain) when one changed: the files are not stat'ed twice.
  const bool checked_after = req.kind != RequestKind::kClosure;
  for (int attempt = 0; attempt < 2 && !memo; ++attempt) {
    WalkShare& share = walk_share(base::normal_path(cmd.source, req.cwd), source_sig);
    ++share.evaluated;
    closure::CompilerPresenceEvaluator presence(store_.get(), *identity, cmd, req.cwd, kernel_);
    presence.share_with(share.evaluations.get());
    auto computed =
        closure::compute_closure(share.files.get(), cmd, *list, identity->kind, req.cwd, &presence);
    if (!computed.ok()) {
      // A file read by the signature the share kept had changed since (a
      // change no watch heard of): the share is made anew and the closure
      // evaluated again, once, rather than left to the launcher.
      if (attempt == 0 && closure::is_changed_while_read(computed.status())) {
        ++stale_shares_;
        share.outdated = true;
        continue;
      }
      return declined("dependency scan: " + computed.message());
    }
    closure = std::move(computed.value());
    // What the launcher would not store either: it finds out again itself.
    if (closure->uses_time || !closure->unsure.empty()) return declined("no memo for this closure");
    relocation = closure::decide_relocation(cmd, req.cwd, *closure, base_dir);
    probes = closure::ProbeDigests();
    key = closure::action_key(*identity, cmd, req.cwd, *closure, relocation, nullptr, &probes);
    // The directories' signatures from the share, taken before any probe in
    // them (a signature taken now could be newer than a kept probe's answer).
    // A file edited a moment ago (the header of a rebuild right after the
    // edit) is recorded by its content, compared on each use until settled.
    memo = closure::encode_closure_memo(*closure, *list, key, share.walked.get(), req.cwd,
                                        closure::YoungFiles::kCheckedByContent);
    if (!memo) return declined("files too fresh for a memo");
    if (share.validate && !memo_holds(*memo, req.cwd, checked_after)) {
      ++stale_shares_;
      share.outdated = true;
      memo.reset();
    }
  }
  if (!memo) return declined("files changed while the closure was evaluated");
  const std::string tu = closure::translation_unit_key(*identity, cmd, req.cwd, base_dir).hex();
  // What the launcher finds, in one index write: the memo replaced (kept,
  // as the launcher keeps it), the token key, the snapshot and the memo.
  std::vector<cache::Store::MemoWrite> writes;
  std::string previous;
  store_->visit_memo("closure", tu, [&](std::string_view bytes) { previous.assign(bytes); });
  const std::optional<cache::Hash128> token =
      token_key(*identity, cmd, req.cwd, *closure, relocation, &probes);
  if (token) writes.push_back({std::string(closure::kTokenKeyTable), key.hex(), token->hex()});
  // A translation unit compiled before, evaluated again because a file
  // changed: a comment edit finds the entry of the compile before it.
  if (!previous.empty() && token) take_token_entry(*closure, key, *token);
  if (!previous.empty())
    writes.push_back({std::string(launcher::kPreviousMemoTable), tu, std::move(previous)});
  closure::note_source_inert(&*closure, *kernel_);
  writes.push_back({std::string(closure::kClosureSnapshotTable), tu,
                    closure::encode_closure_snapshot(*closure, key)});
  writes.push_back({"closure", tu, std::move(*memo)});
  if (!store_->put_records({}, writes).ok()) return declined("the memo could not be stored");
  (void)walk_share_->learned->write_out();  // within the time below
  ++evaluations_stored_;
  evaluation_us_ += uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::steady_clock::now() - start)
                                 .count());
  r.info = kEvaluatedAnswer;
  return r;
}

std::optional<cache::Hash128> Server::token_key(const compiler::CompilerIdentity& identity,
                                                const compiler::CompileCommand& cmd,
                                                const std::string& cwd,
                                                const closure::Closure& closure,
                                                const closure::KeyRelocation& relocation,
                                                closure::ProbeDigests* probes) {
  if (!closure::token_keys_refused(cmd, identity.kind).empty()) return std::nullopt;
  // A long-lived server meets files without end: its memory of their
  // fingerprints is bounded (the store keeps them all).
  if (token_memory_.values.size() > 500000) token_memory_.values.clear();
  return closure::token_key(identity, cmd, cwd, closure, relocation, store_.get(), true,
                            &token_memory_, probes);
}

void Server::take_token_entry(const closure::Closure& closure, const cache::Hash128& key,
                              const cache::Hash128& token) {
  const cache::Hash128 dated = closure.uses_date ? closure::dated_key(key) : key;
  if (store_->get_action(dated)) return;
  const cache::Hash128 dated_token = closure.uses_date ? closure::dated_key(token) : token;
  std::optional<cache::ActionRecord> action = store_->get_action(dated_token);
  // Whoever serves it checks its payload (the files outside the scan).
  if (!action || action->exit_code != 0) return;
  if (store_->put_action(dated, *action).ok()) store_->add_counter("token_hits", 1);
}

}  // namespace lexpack::server
