// A compile's entry trusted from its closure memo: every path it rests on
// watched, then its stat check (build_trust), and a build's prepare, which
// checks one entry's stats on a second thread while it watches the next
// entry's paths on its own (the watch table is the server's alone).
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "base/file_stat.h"
#include "base/file_util.h"
#include "closure/closure_memo.h"
#include "server/server_state.h"

namespace lexpack::server {
namespace {

// Adds the time from its making to its end to `*total` (microseconds).
struct Timed {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  uint64_t* total;
  ~Timed() {
    *total += uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count());
  }
};

}  // namespace

bool Server::watch_memo(uint32_t id, const closure::ClosureMemo& memo, const std::string& cwd,
                        std::string* why) {
  Entry& e = entries_[id];
  ++validations_;
  e.generation++;
  e.trusted = false;
  e.same_dirs.clear();
  for (size_t i = 0; i + 1 < memo.same_dirs.size(); i += 2) {
    e.same_dirs.push_back({base::absolute_path(memo.same_dirs[i], cwd),
                           base::absolute_path(memo.same_dirs[i + 1], cwd)});
  }
  // Watches first, then the stat check: a change after a watch exists is an
  // event, one before it is seen by the check.
  watches_.begin_pass({id, e.generation});
  auto watch = [&](const std::string& p) {
    if (!p.empty() && p[0] == '/') return watches_.watch_path(p);  // no copy: most are
    return watches_.watch_path(base::absolute_path(p.empty() ? "." : p, cwd));
  };
  bool ok = watch(cwd);
  for (const auto& d : memo.dependencies) ok = ok && watch(d.path);
  for (const auto& d : memo.probed_dirs) {
    ok = ok && watch(d.dir);
    for (const std::string& p : d.probes) ok = ok && watch(p);
  }
  for (const std::string& d : memo.absent_dirs) ok = ok && watch(d);
  for (const auto& v : memo.vouched) {
    ok = ok && watch(v.ancestor);
    for (const std::string& d : v.dirs) ok = ok && watch(d);
  }
  if (!ok) {
    *why = "a dependency cannot be watched (watch limit, or a filesystem inotify may not hear)";
    if (errno == ENOSPC) drop_all_trust();
  }
  return ok;
}

bool Server::trusted_after_check(uint32_t id, std::string* why) {
  Entry& e = entries_[id];
  e.linked = watches_.multi_linked();
  e.trusted = true;
  drain();  // whatever happened while the watches were being added
  if (!e.trusted) *why = "changed while being validated";
  return e.trusted;
}

bool Server::read_pending(const std::string& tu, PendingTrust* p, std::string* why,
                          bool* changed_first) {
  if (!store_->visit_memo("closure", tu, [&](std::string_view b) { p->bytes.assign(b); })) {
    *why = "no closure memo";
    return false;
  }
  // The first dependency (the source) first, read alone: its edit is the
  // commonest change, and a memo it makes out of date needs neither a
  // decode nor a watch of the hundreds of paths it names. (One recorded by
  // content, edited a moment before it was read, is out of date when its
  // bytes differ.)
  const closure::ContentLookup content = closure::content_lookup(files_.get(), p->cwd);
  std::string_view first;
  base::StatSignature first_stat, now;
  cache::Hash128 first_content;
  if (closure::closure_memo_first_dependency(p->bytes, &first, &first_stat, &first_content) &&
      base::stat_file(base::absolute_path(std::string(first), p->cwd), &now) &&
      !closure::dependency_holds(first, now, first_stat, first_content, &content)) {
    *why = "closure memo out of date: changed: " + std::string(first);
    *changed_first = true;
    return false;
  }
  if (!closure::decode_closure_memo(p->bytes, &p->memo)) {
    *why = "closure memo unreadable";
    return false;
  }
  return true;
}

bool Server::watch_pending(PendingTrust* p, std::string* why) {
  if (!watch_memo(p->id, p->memo, p->cwd, why)) return false;
  p->linked = watches_.multi_linked();
  return true;
}

void Server::check_pending(PendingTrust* p, closure::MemoStatSource* stats,
                           const closure::ContentLookup* content) {
  // A dependency whose signature is not the memo's (a generated header
  // rewritten with the same bytes, or one recorded as too young to trust
  // by stat) is compared by content, once: the watch added before reports
  // any write after it.
  p->read = closure::check_encoded_closure_memo(p->bytes, stats, &p->key, &p->uses_date,
                                                &p->changed, nullptr, content, &p->refresh);
}

bool Server::finish_trust(PendingTrust* p, std::string* why) {
  if (!p->read || !p->changed.empty()) {
    *why = !p->read ? "closure memo unreadable" : "closure memo out of date: " + p->changed;
    return false;
  }
  // Later rechecks compare against the signatures found now.
  bool by_content = false;
  for (const closure::MemoRefresh& r : p->refresh) {
    if (r.kind == closure::MemoRefresh::Kind::kDependency &&
        r.index < p->memo.dependencies.size()) {
      p->memo.dependencies[r.index].stat = r.stat;
      by_content = true;
    }
  }
  content_trusts_ += by_content;
  Entry& e = entries_[p->id];
  e.action_key = p->key;
  e.uses_date = p->uses_date;
  note_rechecks(&e, p->memo, p->cwd);
  return true;
}

bool Server::build_trust(uint32_t id, const std::string& cwd, std::string* why,
                         SharedStats* shared) {
  Timed timed{.total = &trust_us_};
  PendingTrust p;
  p.id = id;
  p.cwd = cwd;
  bool changed_first = false;
  if (!read_pending(entries_[id].tu, &p, why, &changed_first)) {
    declined_by_first_ += changed_first;
    return false;
  }
  if (!watch_pending(&p, why)) return false;
  if (shared) shared->start_check(cwd, stat_epoch());
  const closure::ContentLookup content = closure::content_lookup(files_.get(), cwd);
  check_pending(&p, shared, &content);
  return finish_trust(&p, why) && trusted_after_check(id, why);
}

size_t Server::check_for_build(const std::vector<ToCheck>& checks,
                               std::chrono::steady_clock::time_point deadline) {
  bool busy = false;
  size_t queued = 0;
  // Compiles of another build waiting come first; past the deadline the
  // rest is checked when nothing waits.
  auto go_on = [&](const ToCheck& c) {
    busy = busy || others_waiting() || std::chrono::steady_clock::now() > deadline;
    if (busy) {
      queue_trust(c.id, c.cwd);
      ++queued;
    }
    return !busy && ::chdir(c.cwd.c_str()) == 0;
  };
  if (checks.size() < 2 || std::thread::hardware_concurrency() < 2) {
    SharedStats shared;
    for (const ToCheck& c : checks) {
      std::string why;
      if (go_on(c)) build_trust(c.id, c.cwd, &why, &shared);
    }
    return queued;
  }
  // A batch's memos are held at once (a Boost TU's decoded memo is about
  // half a megabyte), and a batch once begun is checked to its end.
  constexpr size_t kBatch = 32;
  // The stat answers go on from batch to batch while no event is read.
  SharedStats shared;
  for (size_t begin = 0; begin < checks.size(); begin += kBatch) {
    const std::vector<ToCheck> batch(
        checks.begin() + long(begin),
        checks.begin() + long(std::min(checks.size(), begin + kBatch)));
    if (busy) {
      for (const ToCheck& c : batch) go_on(c);
      continue;
    }
    std::deque<PendingTrust> pending;
    {
      Timed timed{.total = &trust_us_};
      const uint64_t drops = drops_;
      check_beside_watches(batch, go_on, &shared, &pending);
      // A trust drop meanwhile (a watch limit met) forgot the watches made
      // before it: these are checked again when nothing waits.
      if (drops_ != drops) {
        for (const PendingTrust& p : pending) queue_trust(p.id, p.cwd);
        queued += pending.size();
        continue;
      }
      for (PendingTrust& p : pending) {
        if (!p.wants_content) trust_checked(&p);
      }
      // Every event since the first watch was added: a change after an
      // entry's watches untrusts it here, one before them was seen by its
      // check.
      drain();
    }
    // Those that wanted a dependency compared by content, checked again
    // here, where the file table is free now, under the watches they have.
    for (PendingTrust& p : pending) {
      if (p.wants_content && go_on({p.id, p.cwd, {}})) trust_by_content(&p, &shared);
    }
  }
  return queued;
}

void Server::trust_by_content(PendingTrust* p, SharedStats* shared) {
  Timed timed{.total = &trust_us_};
  shared->start_check(p->cwd, stat_epoch());
  const closure::ContentLookup content = closure::content_lookup(files_.get(), p->cwd);
  check_pending(p, shared, &content);
  if (trust_checked(p)) drain();  // a change since its watches untrusts it
}

bool Server::trust_checked(PendingTrust* p) {
  std::string why;
  if (!finish_trust(p, &why)) return false;
  Entry& e = entries_[p->id];
  e.linked = std::move(p->linked);
  e.trusted = true;
  return true;
}

void Server::check_beside_watches(const std::vector<ToCheck>& checks,
                                  const std::function<bool(const ToCheck&)>& go_on,
                                  SharedStats* shared, std::deque<PendingTrust>* pending) {
  // Each entry's memo read and decoded by `reader` ahead of this thread,
  // which watches its paths, then checked by `checker`. Neither touches
  // what this thread does: the reader the store and the file table (this
  // thread leaves them alone meanwhile), the checker only its own stat
  // answers. Deques: their elements stay where they are as more are added.
  struct Read {
    PendingTrust p;
    bool ok = false, changed_first = false;
  };
  std::deque<Read> reads;
  std::mutex m;
  std::condition_variable more;
  size_t read = 0, ready = 0;
  bool done = false;
  // Reads every entry of `checks` (this thread may skip some, never wait
  // for one not read).
  std::thread reader([&] {
    for (const ToCheck& c : checks) {
      Read r;
      r.p.id = c.id;
      r.p.cwd = c.cwd;
      std::string why;
      r.ok = read_pending(c.tu, &r.p, &why, &r.changed_first);
      std::lock_guard<std::mutex> lock(m);
      reads.push_back(std::move(r));
      ++read;
      more.notify_all();
    }
  });
  const uint64_t epoch = stat_epoch();
  std::thread checker([&] {
    for (size_t k = 0;; ++k) {
      PendingTrust* p = nullptr;
      {
        std::unique_lock<std::mutex> lock(m);
        more.wait(lock, [&] { return k < ready || done; });
        if (k >= ready) return;
        p = &(*pending)[k];
      }
      // The file table is the reader's: a dependency that wants its
      // content compared makes the entry checked again after, in turn.
      const closure::ContentLookup content = [p](std::string_view, const base::StatSignature&) {
        p->wants_content = true;
        return std::optional<cache::Hash128>();
      };
      shared->start_check(p->cwd, epoch);
      check_pending(p, shared, &content);
      // What is left to do needs the decoded memo only, but for a check
      // again by content.
      if (!p->wants_content) std::string().swap(p->bytes);
    }
  });
  for (size_t k = 0; k < checks.size(); ++k) {
    if (!go_on(checks[k])) continue;
    Read* r = nullptr;
    {
      std::unique_lock<std::mutex> lock(m);
      more.wait(lock, [&] { return k < read; });
      r = &reads[k];
    }
    declined_by_first_ += r->changed_first;
    std::string why;
    if (!r->ok || !watch_pending(&r->p, &why)) continue;
    std::lock_guard<std::mutex> lock(m);
    pending->push_back(std::move(r->p));
    ++ready;
    more.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(m);
    done = true;
    more.notify_all();
  }
  reader.join();
  checker.join();
}

Reply Server::prepare(const Request& req) {
  apply_client(req);
  drain();
  const std::string base_dir = client_base_dir();
  // The build waits for this reply: past kBatchCheckBudget, the rest is
  // checked when nothing waits (on many cores the compiles' own launchers
  // check them sooner than one server would).
  const auto deadline = std::chrono::steady_clock::now() + kBatchCheckBudget;
  IdentityMemo identities;
  Reply r;
  r.kind = ReplyKind::kInfo;
  r.answers.resize(req.compiles.size());
  std::vector<std::optional<uint32_t>> ids(req.compiles.size());
  std::vector<ToCheck> checks;
  std::unordered_set<uint32_t> to_check;
  for (size_t i = 0; i < req.compiles.size(); ++i) {
    const Request::Compile& c = req.compiles[i];
    if (c.argv.empty() || c.cwd.empty() || c.cwd[0] != '/' || ::chdir(c.cwd.c_str()) != 0) continue;
    compiler::CompileCommand cmd = compiler::parse_compile_command(c.argv);
    std::string why;
    ids[i] = entry_of(c.cwd, cmd, base_dir, &why, &identities);
    if (ids[i] && !entries_[*ids[i]].trusted && to_check.insert(*ids[i]).second) {
      checks.push_back({*ids[i], c.cwd, entries_[*ids[i]].tu});
    }
  }
  const size_t queued = check_for_build(checks, deadline);
  size_t trusted = 0;
  for (size_t i = 0; i < req.compiles.size(); ++i) {
    if (ids[i] && entries_[*ids[i]].trusted) {
      ++trusted;
      r.answers[i] = kTrustedAnswer;
    }
  }
  r.info = std::to_string(trusted) + " of " + std::to_string(req.compiles.size()) +
           " compiles answered from memory" +
           (queued ? ", " + std::to_string(queued) + " left for a moment when idle" : "");
  return r;
}

}  // namespace lexpack::server
