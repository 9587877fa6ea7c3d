// Where a miss's closure comes from without a walk of its own: the closure
// kept for this TU when only its source changed, or kept with a memo that
// still holds, another machine's memo from the remote, or the server's
// evaluation. Each is checked here before it is
// taken; when none applies, slow_path() walks and evaluates.
#include "closure/closure_snapshot.h"
#include "closure/remote_memo.h"
#include "compiler/derived_search_list.h"
#include "launcher/launcher_impl.h"

namespace lexpack::launcher::detail {

void Launcher::take_closure(compiler::SearchList list, closure::Closure closure,
                            const closure::KeyRelocation& relocation, const cache::Hash128& key) {
  list_ = std::move(list);
  closure_ = std::move(closure);
  have_closure_ = true;
  relocation_ = relocation;
  key_ = key;
  uses_date_ = closure_.uses_date;
}

bool Launcher::closure_from_snapshot(const cache::Hash128& tu, const std::string& stale_memo) {
  // The memo's first dependency alone tells whether the source is what
  // changed: the rest is decoded only when the kept closure may apply.
  std::string_view first;
  base::StatSignature first_stat;
  cache::Hash128 first_content;
  if (stale_memo.empty() ||
      !closure::closure_memo_first_dependency(stale_memo, &first, &first_stat, &first_content) ||
      first != cmd_.source) {
    return false;
  }
  // The source as it is now: its summary (a read and a lex, as the walk's).
  // One whose signature did not move is not what made the memo out of date.
  base::StatSignature sig;
  if (!base::stat_file(cmd_.source, &sig) || sig == first_stat) return false;
  auto source = files_->load(cmd_.source, base::absolute_path(cmd_.source, cwd_), sig);
  if (!source.ok()) return false;
  // A directive edit (the usual reason to come here) is told from the
  // snapshot's head, read in place: its paths are neither copied nor decoded.
  // An edit of #define or #undef lines alone is told by the source's inert
  // fingerprint (closure_snapshot.h): when the evaluation the snapshot was
  // made by read none of the macros the edit touched, it is taken too.
  std::string snapshot;
  bool directives_changed = false;
  std::optional<cache::Hash128> inert;
  store_->visit_memo(closure::kClosureSnapshotTable, tu.hex(), [&](std::string_view bytes) {
    cache::Hash128 kept;
    directives_changed = closure::snapshot_source_preprocessing(bytes, &kept) &&
                         (kept.is_zero() || kept != source->preprocessing);
    closure::SnapshotInert head;
    if (directives_changed && closure::snapshot_source_inert(bytes, &head) &&
        !head.fingerprint.is_zero() && head.reads_known) {
      inert = closure::source_inert_fingerprint(cmd_.source, source->content, *kernel_, head.reads);
      if (inert && *inert != head.fingerprint) inert.reset();
    }
    if (!directives_changed || inert) snapshot.assign(bytes);
  });
  if (directives_changed && !inert) {
    note("closure evaluated again: the source changed, and its directives changed");
    return false;
  }
  closure::ClosureMemo memo;
  auto list = compiler::search_list_for(store_.get(), identity_, cmd_, cwd_);
  if (snapshot.empty() || !list.ok() || !closure::decode_closure_memo(stale_memo, &memo)) {
    return false;
  }
  closure::ContentLookup content = content_lookup();
  std::string why;
  std::optional<closure::Closure> taken = closure::closure_with_new_source(
      std::move(snapshot), std::move(memo), sig, source->content, source->preprocessing,
      inert ? &*inert : nullptr, &content, &why);
  if (!taken) {
    note("closure evaluated again: the source changed, and " + why);
    return false;
  }
  note(inert ? "closure taken again: the source's directives changed only in macros its "
               "evaluation never read"
             : "closure taken again: the source changed outside its directives");
  const closure::KeyRelocation relocation =
      closure::decide_relocation(cmd_, cwd_, *taken, base_dir_);
  const cache::Hash128 key = closure::action_key(identity_, cmd_, cwd_, *taken, relocation);
  take_closure(std::move(list.value()), std::move(*taken), relocation, key);
  return true;
}

bool Launcher::closure_from_kept_snapshot(const cache::Hash128& tu) {
  if (key_.is_zero()) return false;
  std::string snapshot;
  store_->visit_memo(closure::kClosureSnapshotTable, tu.hex(),
                     [&](std::string_view bytes) { snapshot.assign(bytes); });
  closure::Closure taken;
  cache::Hash128 snapshot_key;
  if (!closure::decode_closure_snapshot(std::move(snapshot), &taken, &snapshot_key) ||
      snapshot_key != key_) {
    return false;
  }
  return take_snapshot(std::move(taken), key_, "closure taken from the memo's snapshot");
}

bool Launcher::take_snapshot(closure::Closure taken, const cache::Hash128& key,
                             const std::string& line) {
  if (taken.files.empty() || taken.files[0].path != cmd_.source) return false;
  auto list = compiler::search_list_for(store_.get(), identity_, cmd_, cwd_);
  if (!list.ok()) return false;
  const closure::KeyRelocation relocation =
      closure::decide_relocation(cmd_, cwd_, taken, base_dir_);
  if (closure::action_key(identity_, cmd_, cwd_, taken, relocation) != key) return false;
  note(line);
  take_closure(std::move(list.value()), std::move(taken), relocation, key);
  return true;
}

bool Launcher::closure_from_elsewhere(const cache::Hash128& tu, bool again) {
  if (!elsewhere_ || explain_ || read_only_) return false;
  const int64_t asked_at = elapsed_us();
  // A compile started early checks each file of the closure after it.
  const ElsewhereAsk ask = again    ? ElsewhereAsk::kAgain
                           : early_ ? ElsewhereAsk::kCheckedAfter
                                    : ElsewhereAsk::kCheckedBefore;
  if (std::string why = elsewhere_(ask); !why.empty()) {
    note("closure not evaluated by the server (" + why + ")");
    return false;
  }
  const int64_t answered_in = elapsed_us() - asked_at;
  // Checked here as for a hit: what was evaluated elsewhere must still hold.
  // Beside a compile started before the server read any file, not yet: the
  // checks after it (each file as the evaluation found it and stamped before
  // the start, no directory of the closure stamped since) decide whether its
  // result is stored under this key; the memo is checked only when an entry
  // would answer instead (settle_early_compile). Its head alone is read then,
  // in place.
  cache::Hash128 memo_key, snapshot_key;
  bool uses_date = false, parsed = false;
  std::string changed, memo, snapshot;
  store_->visit_memo("closure", tu.hex(), [&](std::string_view bytes) {
    if (early_) {
      parsed = closure::closure_memo_key(bytes, &memo_key, &uses_date);
    } else {
      memo.assign(bytes);  // checked outside the read: the check reads the store too
    }
  });
  if (!early_) parsed = memo_check(memo, &memo_key, &changed);
  store_->visit_memo(closure::kClosureSnapshotTable, tu.hex(),
                     [&](std::string_view bytes) { snapshot.assign(bytes); });
  closure::Closure taken;
  if (!parsed || !changed.empty() ||
      !closure::decode_closure_snapshot(std::move(snapshot), &taken, &snapshot_key) ||
      snapshot_key != memo_key ||
      !take_snapshot(
          std::move(taken), memo_key,
          "closure evaluated by the server (" + std::to_string(answered_in / 1000) + " ms)")) {
    return false;
  }
  memo_stored_elsewhere_ = true;
  elsewhere_tu_ = tu;
  if (early_) unchecked_memo_ = {tu.hex(), memo_key};
  return true;
}

bool Launcher::memo_check(std::string_view memo, cache::Hash128* key, std::string* changed) {
  bool uses_date = false;
  const closure::ContentLookup content = content_lookup();  // for files recorded by content
  return closure::check_encoded_closure_memo(memo, nullptr, key, &uses_date, changed, nullptr,
                                             &content);
}

std::string Launcher::check_unchecked_memo() {
  if (!unchecked_memo_) return {};
  std::string memo;
  store_->visit_memo("closure", unchecked_memo_->tu,
                     [&](std::string_view bytes) { memo.assign(bytes); });
  cache::Hash128 memo_key;
  std::string changed;
  if (!memo_check(memo, &memo_key, &changed)) {
    changed = "the memo cannot be read";
  } else if (changed.empty() && memo_key != unchecked_memo_->key) {
    changed = "the memo was replaced since its closure was taken";
  }
  unchecked_memo_.reset();
  return changed;
}

bool Launcher::closure_from_remote() {
  if (!remote_ || explain_ || read_only_) return false;
  const cache::Hash128 remote_key = closure::remote_memo_key(identity_, cmd_, cwd_, base_dir_);
  std::string what;
  auto counter = [this](std::string_view name, int64_t delta) { count(name, delta); };
  std::optional<std::string> bytes = remote_->fetch_answer(remote_key, counter, &what);
  if (!what.empty()) note(what);
  if (!bytes) return false;
  closure::RemoteMemoView memo;
  if (!closure::decode_remote_memo(*bytes, &memo)) {
    count("remote_memos_refused");
    note("closure memo from the remote refused: not a closure memo of this version");
    return false;
  }
  // The compiler's answer the memo carries, kept where it holds: the list
  // below is then derived from it, not asked of the compiler.
  if (std::string why;
      memo.base_answer && !compiler::remember_shared_base_answer(store_.get(), identity_, cmd_,
                                                                 cwd_, *memo.base_answer, &why)) {
    note("search answer from the remote's memo not taken: " + why);
  }
  auto list = compiler::search_list_for(store_.get(), identity_, cmd_, cwd_);
  if (!list.ok()) return false;
  closure::LocalFacts contents(store_.get());
  auto taken = closure::take_remote_memo(memo, identity_, cmd_, cwd_, base_dir_, *list, &contents);
  if (!taken.ok()) {
    count("remote_memos_refused");
    note("closure memo from the remote refused: " + taken.message());
    return false;
  }
  count("remote_memos_taken");
  note("closure taken from the remote's memo");
  take_closure(std::move(list.value()), std::move(taken->closure), taken->relocation, taken->key);
  return true;
}

}  // namespace lexpack::launcher::detail
