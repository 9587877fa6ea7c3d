// Building and checking closure memos. Checking is the whole cost of a hit,
// so it stats each file relative to a handle on its directory (DirHandles)
// and walks every directory path once, not once per file; the layout the
// memo is stored in is memo_format's.
#include "closure/closure_memo.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include "base/file_stat.h"
#include "base/file_util.h"
#include "closure/absence.h"
#include "closure/include_resolver.h"
#include "closure/memo_format.h"
#include "closure/memo_stat_source.h"
#include "closure/scan_file_cache.h"

namespace lexpack::closure {

ContentLookup content_lookup(FileStates* files, const std::string& cwd) {
  return [files, &cwd](std::string_view path,
                       const base::StatSignature& sig) -> std::optional<cache::Hash128> {
    const std::string p = base::absolute_path(std::string(path), cwd);
    base::Result<cache::Hash128> h = files->content_hash(p, p, sig);
    if (!h.ok()) return std::nullopt;
    return h.value();
  };
}

bool dependency_holds(std::string_view path, const base::StatSignature& now,
                      const base::StatSignature& stat, const cache::Hash128& recorded,
                      const ContentLookup* content) {
  if (now == stat) return true;
  // Rewritten with the same bytes (a fresh configure's generated header):
  // one hash, shared by every process through the file table.
  std::optional<cache::Hash128> same;
  if (content && *content && !recorded.is_zero()) same = (*content)(path, now);
  return same && *same == recorded;
}

namespace {

// One view per thread, reused: a warm scan checks a memo per TU, each with
// thousands of entries, and fresh vectors would be written into fresh pages.
MemoView& reused_view() {
  thread_local MemoView reused;
  return reused;
}

// check_closure_memo() of a memo's view; its dependencies are left out
// unless `dependencies`.
std::string check_view(const MemoView& m, MemoStatSource* stats, const ContentLookup* content,
                       std::vector<MemoRefresh>* refresh, bool dependencies = true) {
  using Kind = MemoRefresh::Kind;
  DirHandles handles;
  MemoStatSource& dirs = stats ? *stats : handles;
  for (size_t i = 0; dependencies && i < m.dependencies.size(); ++i) {
    const auto& d = m.dependencies[i];
    base::StatSignature now;
    if (!dirs.stat_file(d.path, &now)) return "missing: " + std::string(d.path);
    if (now == d.stat) continue;
    if (!dependency_holds(d.path, now, d.stat, d.content, content)) {
      return "changed: " + std::string(d.path);
    }
    if (refresh) refresh->push_back({Kind::kDependency, i, now});
  }
  for (size_t i = 0; i < m.probed_dirs.size(); ++i) {
    const auto& d = m.probed_dirs[i];
    base::StatSignature now;
    bool exists = dirs.stat_dir(d.dir, &now);
    if (!d.check_each && exists == d.exists && (!exists || now == d.stat)) continue;
    // Nothing was under it when it was probed, so whatever is now may be found.
    if (!d.exists) return "probed directory appeared: " + std::string(d.dir);
    if (!exists) continue;  // gone: its probes are gone with it
    for (size_t k = d.first_probe; k < d.first_probe + d.probe_count; ++k) {
      base::StatSignature sig;
      std::string path = base::join_path(d.dir, m.probes[k]);
      if (dirs.stat_file(path, &sig)) return "appeared: " + path;
    }
    if (refresh) refresh->push_back({Kind::kProbedDir, i, now});
  }
  for (size_t i = 0; i < m.vouched.size(); ++i) {
    const auto& v = m.vouched[i];
    base::StatSignature now;
    bool exists = dirs.stat_dir(v.ancestor, &now);
    if (exists && now == v.stat) continue;
    for (size_t k = v.first_dir; k < v.first_dir + v.dir_count; ++k) {
      base::StatSignature sig;
      if (dirs.stat_dir(m.vouched_dirs[k], &sig)) {
        return "probed directory appeared: " + std::string(m.vouched_dirs[k]);
      }
    }
    if (exists && refresh) refresh->push_back({Kind::kVouched, i, now});
  }
  for (std::string_view d : m.absent_dirs) {
    base::StatSignature sig;
    if (dirs.stat_dir(d, &sig)) return "search directory appeared: " + std::string(d);
  }
  for (size_t i = 0; i + 1 < m.same_dirs.size(); i += 2) {
    base::StatSignature dropped, kept;
    if (!dirs.stat_dir(m.same_dirs[i], &dropped) || !dirs.stat_dir(m.same_dirs[i + 1], &kept) ||
        dropped.dev != kept.dev || dropped.ino != kept.ino) {
      return "search directory no longer the same as " + std::string(m.same_dirs[i + 1]) + ": " +
             std::string(m.same_dirs[i]);
    }
  }
  return {};
}

// A closure's failed probes by directory (its numbers in
// failed_probe_dirs): the directories in name order, each one's probes in
// the order the walk met them, all in one array (no list per directory).
struct ProbeGroups {
  struct Group {
    std::string_view dir;
    size_t count = 0;  // its probes
    size_t first = 0;  // its first probe's place in `placed`
  };
  std::vector<Group> groups;     // in the order first met
  std::vector<uint32_t> order;   // `groups` by name
  std::vector<uint32_t> placed;  // the probes' indices, group after group

  explicit ProbeGroups(const Closure& closure) {
    const size_t probes = closure.failed_probes.size();
    std::vector<int32_t> group_of;  // by directory number, -1 for none yet
    std::vector<uint32_t> group_of_probe(probes);
    for (size_t i = 0; i < probes; ++i) {
      const uint32_t id = closure.failed_probe_dirs[i];
      if (id >= group_of.size()) group_of.resize(id + 1 + group_of.size() / 2, -1);
      if (group_of[id] < 0) {
        group_of[id] = int32_t(groups.size());
        groups.push_back({base::dir_of(closure.failed_probes[i])});
      }
      group_of_probe[i] = uint32_t(group_of[id]);
      ++groups[group_of_probe[i]].count;
    }
    order.resize(groups.size());
    for (size_t g = 0; g < order.size(); ++g) order[g] = uint32_t(g);
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return groups[a].dir < groups[b].dir; });
    size_t at = 0;
    for (uint32_t g : order) {
      groups[g].first = at;
      at += groups[g].count;
    }
    std::vector<size_t> next(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) next[g] = groups[g].first;
    placed.resize(probes);
    for (size_t i = 0; i < probes; ++i) placed[next[group_of_probe[i]]++] = uint32_t(i);
  }
};

// Signatures are judged settled by `now`.
std::optional<std::string> encode_memo_at(const Closure& closure, const compiler::SearchList& list,
                                          const cache::Hash128& action_key, ScanFileCache* shared,
                                          const std::string& cwd, int64_t now,
                                          YoungFiles young = YoungFiles::kNoMemo) {
  MemoView m;
  m.dependencies.reserve(closure.files.size());
  for (const ClosureFile& f : closure.files) {
    // A #pragma once twin whose signature moves may have joined or left its
    // twin's mtime or inode: the key is made again (content zero).
    const cache::Hash128 content = f.once_twin ? cache::Hash128{} : f.content;
    base::StatSignature stat = f.stat;
    if (!base::signature_is_settled(f.stat, now)) {
      // Written within the last second (a configure's generated header): a
      // next write may leave its signature as it is, so it is recorded as
      // no file's (zero) and checked by its content on every use.
      if (young == YoungFiles::kNoMemo || content.is_zero()) return std::nullopt;
      stat = base::StatSignature{};
    }
    m.dependencies.push_back({f.path, stat, content});
  }
  // Probes by directory, the directories in name order and each one's probes
  // in the order the walk met them: grouped by the directories' numbers, then
  // the few directories sorted. (A closure without the numbers gets no memo.)
  const std::vector<uint32_t>& dir_ids = closure.failed_probe_dirs;
  if (dir_ids.size() != closure.failed_probes.size()) return std::nullopt;
  // The probes' candidate numbers, when the scan's graph gave them: a probe
  // with an absolute path is then checked for an entry once per scan by
  // number (a relative one names another file in another directory).
  const bool numbered = shared && closure.failed_probe_ids.size() == closure.failed_probes.size();
  const ProbeGroups grouped(closure);
  m.probes.reserve(closure.failed_probes.size());
  // Directory signatures, each taken once: a scan's shared answers, else now.
  DirSignatures dir_sig([&](const std::string& dir) -> std::optional<base::StatSignature> {
    if (shared) {
      return dir.empty()     ? shared->dir_stat_once(".", cwd.empty() ? "." : cwd)
             : dir[0] == '/' ? shared->dir_stat_once(dir, dir)
                             : shared->dir_stat_once(dir, base::absolute_path(dir, cwd));
    }
    base::StatSignature s;
    if (!base::stat_dir(dir, &s)) return std::nullopt;
    return s;
  });
  VouchedGroups vouched(shared ? cwd : std::string(), shared);
  for (uint32_t g : grouped.order) {
    const ProbeGroups::Group& group = grouped.groups[g];
    MemoView::ProbedDir d;
    d.dir = group.dir;
    const std::string_view dir = d.dir;
    const std::optional<base::StatSignature>& sig = dir_sig(dir);
    d.exists = sig.has_value();
    if (sig) d.stat = *sig;
    if (!d.exists && vouched.add(dir, dir_sig, now)) continue;
    d.check_each = d.exists && !base::signature_is_settled(d.stat, now);
    d.first_probe = m.probes.size();
    if (d.exists) {
      for (size_t k = 0; k < group.count; ++k) {
        m.probes.push_back(probe_name(dir, closure.failed_probes[grouped.placed[group.first + k]]));
        // A missing directory's probe ("dir/", ScanFileCache::absent_root)
        // whose directory is there by now: what is under it was not
        // looked at, so nothing here vouches for the closure.
        if (m.probes.back().empty()) return std::nullopt;
      }
      d.probe_count = group.count;
      // A probe that is some entry (a dangling symlink) may resolve later
      // with the directory unchanged: then each probe is checked.
      const bool known = shared && closure.failed_probes_answered_by == shared;
      for (size_t k = 0; k < group.count && !d.check_each && !known; ++k) {
        const std::string_view name = m.probes[d.first_probe + k];
        // Once per scan for the scan's probes (dir_sig took the directory's
        // signature first).
        if (!shared) {
          d.check_each = !no_entry(base::join_path(dir, name));
        } else if (numbered && !dir.empty() && dir[0] == '/') {
          const uint32_t candidate = closure.failed_probe_ids[grouped.placed[group.first + k]];
          d.check_each = !shared->candidate_no_entry_once(candidate, dir, name);
        } else {
          const std::string probe = base::join_path(dir, name);
          d.check_each = !shared->no_entry_once(base::absolute_path(probe, cwd));
        }
      }
    }
    m.probed_dirs.push_back(d);
  }
  for (const VouchedGroups::Group& g : vouched.groups()) {
    m.vouched.push_back({g.ancestor, g.stat, m.vouched_dirs.size(), g.dirs.size()});
    m.vouched_dirs.insert(m.vouched_dirs.end(), g.dirs.begin(), g.dirs.end());
  }
  m.absent_dirs.assign(list.missing_dirs.begin(), list.missing_dirs.end());
  for (const compiler::SearchList::SameDir& d : list.same_dirs) {
    m.same_dirs.push_back(d.dropped);
    m.same_dirs.push_back(d.kept);
  }
  return encode_view(m, action_key, closure.uses_date);
}

}  // namespace

std::optional<std::string> encode_closure_memo(const Closure& closure,
                                               const compiler::SearchList& list,
                                               const cache::Hash128& action_key,
                                               ScanFileCache* shared, const std::string& cwd,
                                               YoungFiles young) {
  if (!list.memoizable) return std::nullopt;  // see SearchList::memoizable
  // Settled means settled when stat'ed: a scan's stats may be minutes old, but
  // none is older than its cache.
  int64_t now = shared ? shared->created_ns() : base::now_ns();
  return encode_memo_at(closure, list, action_key, shared, cwd, now, young);
}

std::string encode_explain_memo(const Closure& closure, const compiler::SearchList& list,
                                const cache::Hash128& action_key) {
  std::optional<std::string> memo =
      encode_memo_at(closure, list, action_key, nullptr, {}, std::numeric_limits<int64_t>::max());
  return memo ? *memo : std::string();
}

std::string check_closure_memo(const ClosureMemo& m, MemoStatSource* stats,
                               const ContentLookup* content, std::vector<MemoRefresh>* refresh) {
  if (refresh) refresh->clear();
  return check_view(view_of(m), stats, content, refresh);
}

bool apply_memo_refresh(const std::vector<MemoRefresh>& refresh, int64_t now_ns,
                        ClosureMemo* memo) {
  using Kind = MemoRefresh::Kind;
  bool applied = false;
  for (const MemoRefresh& r : refresh) {
    if (!base::signature_is_settled(r.stat, now_ns)) continue;
    switch (r.kind) {
      case Kind::kDependency:
        if (r.index >= memo->dependencies.size()) return false;
        memo->dependencies[r.index].stat = r.stat;
        break;
      case Kind::kProbedDir:
        if (r.index >= memo->probed_dirs.size()) return false;
        memo->probed_dirs[r.index].stat = r.stat;
        memo->probed_dirs[r.index].check_each = false;
        break;
      case Kind::kVouched:
        if (r.index >= memo->vouched.size()) return false;
        memo->vouched[r.index].stat = r.stat;
        break;
    }
    applied = true;
  }
  return applied;
}

bool check_encoded_closure_memo(std::string_view bytes, cache::Hash128* action_key, bool* uses_date,
                                std::string* changed) {
  return check_encoded_closure_memo(bytes, nullptr, action_key, uses_date, changed, nullptr);
}

bool check_encoded_memo_directories(std::string_view bytes, std::string* changed) {
  MemoView& m = reused_view();
  cache::Hash128 action_key;
  bool uses_date = false;
  if (!parse_view(bytes, &m, &action_key, &uses_date)) return false;
  *changed = check_view(m, nullptr, nullptr, nullptr, false);
  return true;
}

bool closure_memo_key(std::string_view bytes, cache::Hash128* action_key, bool* uses_date) {
  return parse_head(bytes, action_key, uses_date);
}

bool closure_memo_first_dependency(std::string_view bytes, std::string_view* path,
                                   base::StatSignature* stat, cache::Hash128* content) {
  MemoView::Dependency first;
  if (!parse_first_dependency(bytes, &first)) return false;
  *path = first.path;
  *stat = first.stat;
  *content = first.content;
  return true;
}

bool check_encoded_closure_memo(std::string_view bytes, MemoStatSource* stats,
                                cache::Hash128* action_key, bool* uses_date, std::string* changed,
                                std::vector<std::string_view>* dependencies,
                                const ContentLookup* content, std::vector<MemoRefresh>* refresh) {
  MemoView& m = reused_view();
  if (!parse_view(bytes, &m, action_key, uses_date)) return false;
  if (refresh) refresh->clear();
  *changed = check_view(m, stats, content, refresh);
  if (dependencies) {
    dependencies->clear();
    dependencies->reserve(m.dependencies.size());
    for (const auto& d : m.dependencies) dependencies->push_back(d.path);
  }
  return true;
}

}  // namespace lexpack::closure
