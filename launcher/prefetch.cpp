// The prefetch of a whole build: like the whole-build scan, one directory at
// a time from inside it, worker threads with their own file states over one
// shared file graph and one locked, batching store; then one batched fetch of
// the entries the local store lacks.
#include "launcher/prefetch.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "base/file_util.h"
#include "base/heap_pages.h"
#include "base/run_on_threads.h"
#include "cache/batching_store.h"
#include "cache/config/config.h"
#include "cache/locked_store.h"
#include "cache/remote/local_copy.h"
#include "cache/remote/remote_tier.h"
#include "cache/store.h"
#include "closure/action_key.h"
#include "closure/closure_memo.h"
#include "closure/file_state.h"
#include "closure/remote_memo.h"
#include "closure/scan_file_cache.h"
#include "compiler/compile_command.h"
#include "compiler/derived_search_list.h"
#include "compiler/identify_compiler.h"
#include "compiler/shared_identity.h"
#include "launcher/compile_key.h"
#include "lexer/kernel.h"

namespace lexpack::launcher {
namespace {

struct Keyed {
  std::optional<cache::Hash128> key;
  std::string why_not;
};

// The key of a compile whose closure another machine's memo describes
// (closure/remote_memo.h), its local memo stored; nullopt when the memo does
// not hold here.
std::optional<cache::Hash128> key_from_remote_memo(
    cache::Store* store, closure::LocalFacts* contents, closure::ScanFileCache* shared,
    const closure::RemoteMemoView& remote_memo, const compiler::CompilerIdentity& identity,
    const compiler::CompileCommand& cmd, const std::string& cwd, const std::string& base_dir,
    const cache::Hash128& tu) {
  // The compiler's answer the memo carries, kept where it holds (then the
  // list is derived from it, not asked of the compiler).
  if (std::string why; remote_memo.base_answer) {
    compiler::remember_shared_base_answer(store, identity, cmd, cwd, *remote_memo.base_answer,
                                          &why);
  }
  auto list = compiler::search_list_for(store, identity, cmd, cwd);
  if (!list.ok()) return std::nullopt;
  auto taken =
      closure::take_remote_memo(remote_memo, identity, cmd, cwd, base_dir, *list, contents, shared);
  if (!taken.ok()) {
    store->add_counter("remote_memos_refused", 1);
    return std::nullopt;
  }
  if (std::optional<std::string> memo = closure::encode_closure_memo(
          taken->closure, *list, taken->key, shared, cwd, closure::YoungFiles::kCheckedByContent)) {
    store->put_memo("closure", tu.hex(), *memo);
  }
  store->add_counter("remote_memos_taken", 1);
  return taken->closure.uses_date ? closure::dated_key(taken->key) : taken->key;
}

// One compile's key, as Launcher::run finds it: from a valid closure memo,
// else from another machine's memo (`remote_memo`, may be null), else
// computed (and its memo stored, as the launcher would store it).
Keyed key_of(cache::Store* store, closure::FileStates* files, closure::LocalFacts* contents,
             const closure::RemoteMemoView* remote_memo, const compiler::CompilerIdentity& identity,
             const compiler::CompileCommand& cmd, const std::string& cwd,
             const std::string& base_dir, const lexer::Kernel* kernel) {
  Keyed out;
  cache::Hash128 tu = closure::translation_unit_key(identity, cmd, cwd, base_dir);
  if (std::optional<std::string> memo = store->get_memo("closure", tu.hex())) {
    cache::Hash128 key;
    bool uses_date = false;
    std::string changed;
    if (closure::check_encoded_closure_memo(*memo, &key, &uses_date, &changed) && changed.empty()) {
      out.key = uses_date ? closure::dated_key(key) : key;
      return out;
    }
  }
  if (remote_memo) {
    out.key = key_from_remote_memo(store, contents, files->shared(), *remote_memo, identity, cmd,
                                   cwd, base_dir, tu);
    if (out.key) return out;
  }
  auto computed = compute_compile_key(store, true, files, identity, cmd, cwd, base_dir, kernel);
  if (!computed.ok()) {
    out.why_not = computed.message();
    return out;
  }
  const closure::Closure& c = computed->closure;
  if (c.uses_time) {
    out.why_not = "uncacheable: __TIME__ or __TIMESTAMP__ in the closure";
    return out;
  }
  if (!c.unsure.empty()) {
    out.why_not = "uncacheable: " + c.unsure;
    return out;
  }
  if (std::optional<std::string> memo =
          closure::encode_closure_memo(c, computed->list, computed->key, files->shared(), cwd,
                                       closure::YoungFiles::kCheckedByContent)) {
    store->put_memo("closure", tu.hex(), *memo);
  }
  out.key = c.uses_date ? closure::dated_key(computed->key) : computed->key;
  return out;
}

// The precompiled headers the build makes and that are not there yet
// (absolute paths): a compile that takes one has a key only once it is made
// (closure/pch_maker.h), so a key computed before would be wasted work.
std::set<std::string> precompiled_headers_to_make(const std::vector<PrefetchCompile>& compiles) {
  std::set<std::string> out;
  for (const PrefetchCompile& c : compiles) {
    compiler::CompileCommand cmd = compiler::parse_compile_command(c.argv);
    if (!cmd.makes_pch || cmd.output.empty()) continue;
    std::string path = base::normal_path(cmd.output, c.directory);
    if (::access(path.c_str(), F_OK) != 0) out.insert(std::move(path));
  }
  return out;
}

// The precompiled header of `made` that `cmd` (run in `cwd`, as the
// compile list names it) may take in place of one of its forced includes;
// empty when none.
std::string takes_header_to_make(const compiler::CompileCommand& cmd, const std::string& cwd,
                                 const std::set<std::string>& made) {
  if (made.empty() || cmd.makes_pch) return "";
  for (const std::string& name : cmd.forced_includes) {
    const std::string path = base::normal_path(name, cwd);
    for (const char* suffix : {".gch", ".pch"}) {
      if (made.count(path + suffix)) return path + suffix;
    }
  }
  return "";
}

// Milliseconds spent per phase of a prefetch, summed over its chunks.
class PhaseTimes {
 public:
  // Adds the time since the last call (or the start) to `phase`.
  void lap(std::string_view phase) {
    const auto now = std::chrono::steady_clock::now();
    auto it = std::find_if(ms_.begin(), ms_.end(), [&](const auto& p) { return p.first == phase; });
    if (it == ms_.end()) it = ms_.insert(ms_.end(), {phase, 0.0});
    it->second += std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
  }
  // Each phase in the order first met.
  std::string text() const {
    std::string out;
    for (const auto& [phase, ms] : ms_) {
      if (!out.empty()) out += ", ";
      out += std::string(phase) + " " + std::to_string(std::lround(ms)) + " ms";
    }
    return out;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::vector<std::pair<std::string_view, double>> ms_;
};

// One prefetch's chunks: their keys computed one directory at a time over
// one shared file graph and one locked, batching store, then the entries the
// local store lacks fetched. Fills the prefetch's result.
class Prefetcher {
 public:
  Prefetcher(const std::vector<PrefetchCompile>& compiles, const PrefetchOptions& options,
             std::string base_dir, cache::remote::RemoteTier* tier, cache::Store* store,
             const lexer::Kernel* kernel, PrefetchResult* r)
      : compiles_(compiles),
        options_(options),
        base_dir_(std::move(base_dir)),
        tier_(tier),
        store_(store),
        kernel_(kernel),
        r_(r),
        batching_(store),
        locked_(&batching_),
        jobs_(options.jobs > 0 ? options.jobs
                               : int(std::max(1u, std::thread::hardware_concurrency()))),
        pch_to_make_(precompiled_headers_to_make(compiles)) {
    char old_cwd[4096];
    have_old_cwd_ = ::getcwd(old_cwd, sizeof old_cwd) != nullptr;
    if (have_old_cwd_) old_cwd_ = old_cwd;
  }

  // The keys of the compiles `chunk` names (indices into `compiles`).
  void compute_keys(const std::vector<size_t>& chunk);
  // The entries of `chunk` the local store lacks, each key once, in one
  // batched fetch; how many keys were asked and how many the remote had.
  // What the keys left in the batching store is written meanwhile.
  size_t fetch(const std::vector<size_t>& chunk, size_t* hits);
  void flush() { locked_.flush(); }
  PhaseTimes& times() { return times_; }

 private:
  // The keys of `group`, compiles of the working directory `cwd`.
  void key_group(const std::vector<size_t>& group, const std::string& cwd);
  // Per compile of `group` without a closure memo here, the memo another
  // machine left in the remote (closure/remote_memo.h), in one batch.
  std::vector<std::optional<std::string>> fetch_remote_memos(
      const std::vector<size_t>& group, const std::vector<compiler::CompileCommand>& cmds,
      const std::vector<bool>& left,
      std::map<std::string, base::Result<compiler::CompilerIdentity>>& identities,
      const std::string& cwd);
  cache::remote::CountFn counter() {
    return [this](std::string_view name, int64_t delta) { locked_.add_counter(name, delta); };
  }

  const std::vector<PrefetchCompile>& compiles_;
  const PrefetchOptions& options_;
  const std::string base_dir_;
  cache::remote::RemoteTier* tier_;  // null: no remote
  cache::Store* store_;
  const lexer::Kernel* kernel_;
  PrefetchResult* r_;
  cache::BatchingStore batching_;
  cache::LockedStore locked_;
  closure::ScanFileCache graph_;
  closure::LocalFacts contents_{&locked_};  // the files remote memos name, hashed once
  const int jobs_;
  const std::set<std::string> pch_to_make_;
  bool have_old_cwd_ = false;
  std::string old_cwd_;
  std::set<std::string> asked_;
  PhaseTimes times_;
};

void Prefetcher::compute_keys(const std::vector<size_t>& chunk) {
  std::map<std::string, std::vector<size_t>> by_dir;
  for (size_t i : chunk) by_dir[compiles_[i].directory].push_back(i);
  for (const auto& [dir, group] : by_dir) {
    if (::chdir(dir.c_str()) != 0) {
      for (size_t i : group) r_->why_not[i] = "cannot enter directory " + dir;
      continue;
    }
    key_group(group, base::working_dir());  // as the launcher names it
  }
  if (have_old_cwd_ && ::chdir(old_cwd_.c_str()) != 0) {
    // Only later relative paths would be affected; the caller runs none.
  }
}

void Prefetcher::key_group(const std::vector<size_t>& group, const std::string& cwd) {
  // Each compiler's identity once, here (it may run the compiler, or ask
  // the remote for another machine's answer).
  std::vector<compiler::CompileCommand> cmds(group.size());
  std::vector<bool> left(group.size());  // to the build: its why_not says why
  std::map<std::string, base::Result<compiler::CompilerIdentity>> identities;
  for (size_t k = 0; k < group.size(); ++k) {
    cmds[k] = compiler::parse_compile_command(compiles_[group[k]].argv);
    // Left to the build, which makes its precompiled header first.
    if (std::string pch =
            takes_header_to_make(cmds[k], compiles_[group[k]].directory, pch_to_make_);
        !pch.empty()) {
      left[k] = true;
      r_->why_not[group[k]] = "not prefetched: takes " + pch + ", which this build makes first";
    }
    if (left[k] || !cmds[k].uncacheable.empty() || identities.count(cmds[k].compiler)) continue;
    compiler::RemoteAnswers answers;
    answers.tier = tier_;
    answers.count = counter();
    identities.emplace(cmds[k].compiler, compiler::compiler_identity(&locked_, cmds[k].compiler,
                                                                     tier_ ? &answers : nullptr));
  }
  times_.lap("commands and identities");
  std::vector<std::optional<std::string>> remote_memos =
      fetch_remote_memos(group, cmds, left, identities, cwd);
  times_.lap("memos fetched");
  // Each memo decoded once, for learn() and for its compile's key, on all
  // threads (a Boost TU's memo names about 7,300 paths).
  std::vector<std::optional<closure::RemoteMemoView>> decoded(group.size());
  std::atomic<size_t> next_memo{0};
  auto decode = [&] {
    for (size_t k; (k = next_memo.fetch_add(1)) < group.size();) {
      if (!remote_memos[k]) continue;
      if (!closure::decode_remote_memo(*remote_memos[k], &decoded[k].emplace())) decoded[k].reset();
    }
  };
  base::run_on_threads(std::min<int>(jobs_, int(group.size())), decode);
  std::vector<closure::RemoteMemoView*> memos;
  for (size_t k = 0; k < group.size(); ++k) {
    if (decoded[k]) {
      memos.push_back(&*decoded[k]);
    } else if (remote_memos[k]) {
      locked_.add_counter("remote_memos_refused", 1);
    }
  }
  remote_memos.clear();
  times_.lap("memos decoded");
  if (!memos.empty()) contents_.learn(memos, cwd, base_dir_, &graph_, jobs_);
  times_.lap("their files' facts");
  std::atomic<size_t> next{0};
  size_t end = 0;  // of the slice being keyed
  auto work = [&] {
    base::use_huge_thread_heap_pages();
    closure::FileStates files(&locked_, kernel_);
    files.share(&graph_);
    for (size_t k; (k = next.fetch_add(1)) < end;) {
      size_t i = group[k];
      const compiler::CompileCommand& cmd = cmds[k];
      if (left[k]) continue;
      if (!cmd.uncacheable.empty()) {
        r_->why_not[i] = "uncacheable: " + cmd.uncacheable;
        continue;
      }
      base::Result<compiler::CompilerIdentity>& id = identities.at(cmd.compiler);
      if (!id.ok()) {
        r_->why_not[i] = "compiler identity: " + id.message();
        continue;
      }
      if (id->kind == compiler::CompilerKind::kUnknown) {
        r_->why_not[i] = "not gcc or clang";
        continue;
      }
      if (std::string why; !compiler::refused_by_compiler(cmd, id->kind, &why).empty()) {
        r_->why_not[i] = "uncacheable: " + why;
        continue;
      }
      const closure::RemoteMemoView* remote_memo = decoded[k] ? &*decoded[k] : nullptr;
      Keyed keyed =
          key_of(&locked_, &files, &contents_, remote_memo, *id, cmd, cwd, base_dir_, kernel_);
      r_->keys[i] = keyed.key;
      r_->why_not[i] = std::move(keyed.why_not);
    }
  };
  // In slices, each slice's memos stored and told of before the next is
  // keyed: a server checks them meanwhile.
  // Never fewer compiles than threads.
  const size_t slice = options_.memos_stored
                           ? std::max<size_t>(std::max<size_t>(1, options_.memo_slice), jobs_)
                           : group.size();
  for (size_t begin = 0; begin < group.size(); begin = end) {
    end = std::min(group.size(), begin + slice);
    next = begin;
    base::run_on_threads(std::min<int>(jobs_, int(end - begin)), work);
    times_.lap("keys");
    if (!options_.memos_stored) continue;
    std::vector<size_t> keyed;
    for (size_t k = begin; k < end; ++k) {
      if (r_->keys[group[k]]) keyed.push_back(group[k]);
    }
    if (keyed.empty()) continue;
    locked_.flush();
    times_.lap("memos written");
    options_.memos_stored(std::move(keyed));
  }
}

std::vector<std::optional<std::string>> Prefetcher::fetch_remote_memos(
    const std::vector<size_t>& group, const std::vector<compiler::CompileCommand>& cmds,
    const std::vector<bool>& left,
    std::map<std::string, base::Result<compiler::CompilerIdentity>>& identities,
    const std::string& cwd) {
  std::vector<std::optional<std::string>> memos(group.size());
  if (!tier_ || !options_.fetch) return memos;
  std::vector<size_t> asked;
  std::vector<cache::Hash128> keys;
  for (size_t k = 0; k < group.size(); ++k) {
    const compiler::CompileCommand& cmd = cmds[k];
    if (left[k] || !cmd.uncacheable.empty()) continue;
    base::Result<compiler::CompilerIdentity>& id = identities.at(cmd.compiler);
    if (!id.ok() || id->kind == compiler::CompilerKind::kUnknown) continue;
    const cache::Hash128 tu = closure::translation_unit_key(*id, cmd, cwd, base_dir_);
    if (locked_.visit_memo("closure", tu.hex(), [](std::string_view) {})) continue;
    asked.push_back(k);
    keys.push_back(closure::remote_memo_key(*id, cmd, cwd, base_dir_));
  }
  if (keys.empty()) return memos;
  std::string note;
  std::vector<std::optional<std::string>> got = tier_->fetch_answers(keys, counter(), &note);
  for (size_t j = 0; j < asked.size() && j < got.size(); ++j) memos[asked[j]] = std::move(got[j]);
  return memos;
}

size_t Prefetcher::fetch(const std::vector<size_t>& chunk, size_t* hits) {
  PrefetchResult& r = *r_;
  std::vector<cache::Hash128> missing;
  for (size_t i : chunk) {
    if (!r.keys[i]) continue;
    r.local[i] = locked_.get_action(*r.keys[i]).has_value();
    if (!r.local[i] && asked_.insert(r.keys[i]->hex()).second) missing.push_back(*r.keys[i]);
  }
  *hits = 0;
  times_.lap("local lookups");
  if (!options_.fetch || !tier_ || missing.empty()) return missing.size();
  // Entries go to the store itself, each record after its blobs (the
  // batching store holds blobs back): what the keys left is written
  // first, on another thread while the entries are on their way (the
  // remote is asked from this thread, as everywhere else).
  std::thread writing([&] { locked_.flush(); });
  std::string note;
  std::vector<std::optional<cache::remote::RemoteEntry>> got =
      tier_->fetch_many(missing, counter(), &note);
  times_.lap("entries fetched");
  writing.join();
  times_.lap("memos written");
  // All in one batch: one pack write and two index transactions, not
  // three transactions an entry.
  got.resize(missing.size());
  std::vector<bool> written = cache::remote::store_entries(*store_, missing, got);
  times_.lap("entries stored");
  std::set<std::string> stored;
  for (size_t i = 0; i < missing.size(); ++i) {
    if (got[i]) ++*hits;
    if (written[i]) stored.insert(missing[i].hex());
  }
  r.fetched += stored.size();
  for (size_t i : chunk) {
    if (r.keys[i] && stored.count(r.keys[i]->hex())) r.fetched_now[i] = true;
  }
  if (note.find("failed") != std::string::npos || note.find("timed out") != std::string::npos ||
      note.find("refused") != std::string::npos) {
    r.note = note;
  }
  return missing.size();
}

}  // namespace

PrefetchResult prefetch_compiles(const std::vector<PrefetchCompile>& compiles,
                                 const PrefetchOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  PrefetchResult r;
  r.keys.resize(compiles.size());
  r.why_not.resize(compiles.size());
  r.local.resize(compiles.size());
  r.fetched_now.resize(compiles.size());
  cache::Config config = cache::load_config("");
  std::string error;
  std::unique_ptr<cache::remote::RemoteTier> tier = cache::remote::RemoteTier::open(config, &error);
  if (!error.empty()) r.note = error;
  r.remote = tier != nullptr;
  auto opened = cache::Store::open(cache::StoreOptions{});
  if (!opened.ok()) {
    // A read-only cache takes nothing from the remote, here as in the
    // launcher: not worth a warning on every build.
    for (std::string& w : r.why_not) w = "cache not writable: " + opened.message();
    return r;
  }
  std::unique_ptr<cache::Store> store = std::move(opened.value());
  std::string err;
  const lexer::Kernel* kernel = lexer::default_kernel(&err);
  if (!kernel) {
    for (std::string& w : r.why_not) w = "lexer: " + err;
    return r;
  }
  Prefetcher prefetcher(compiles, options, config.base_dir, tier.get(), store.get(), kernel, &r);
  const size_t step = std::max<size_t>(1, options.chunk);
  for (size_t begin = 0; begin < compiles.size(); begin += step) {
    if (options.deadline_ms > 0 && begin > 0 &&
        std::chrono::steady_clock::now() - started >=
            std::chrono::milliseconds(options.deadline_ms)) {
      for (size_t i = begin; i < compiles.size(); ++i) {
        r.why_not[i] = "not prefetched: past the prefetch's deadline of " +
                       std::to_string(options.deadline_ms) + " ms";
      }
      break;
    }
    std::vector<size_t> chunk;
    for (size_t i = begin; i < std::min(compiles.size(), begin + step); ++i) chunk.push_back(i);
    prefetcher.compute_keys(chunk);
    size_t hits = 0;
    size_t asked_now = prefetcher.fetch(chunk, &hits);
    // A remote without any of a whole chunk's entries (machine A, the first
    // build of a change) will not have the rest either: the compiles go on
    // without their keys computed ahead (each asks the remote itself).
    if (options.stop_when_remote_lacks && hits == 0 && asked_now >= options.cold_chunk) {
      for (size_t i = begin + step; i < compiles.size(); ++i) {
        r.why_not[i] = "not prefetched: the remote had none of the first entries";
      }
      break;
    }
  }
  // A failed write only costs the launcher its own walk.
  prefetcher.flush();
  prefetcher.times().lap("memos written");
  r.phases = prefetcher.times().text();
  return r;
}

}  // namespace lexpack::launcher
