// Building, encoding and checking closure memos. Checking is the whole cost
// of a hit, so it stats each file relative to a handle on its directory and
// walks every directory path once, not once per file.
#include "closure/closure_memo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "base/byte_codec.h"
#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/view_map.h"
#include "closure/absence.h"
#include "closure/include_resolver.h"
#include "closure/scan_file_cache.h"

namespace lexpack::closure {
namespace {

// 2: probes are kept as names relative to their directory.
// 3: a probed directory that was missing keeps no names (any entry it gains
// is a change).
// 6: dependencies keep their content hash; missing probed directories are
// vouched for by their deepest existing ancestor.
// 8: a #pragma once twin keeps no content hash (any change of its signature
// is a change); a TU whose files name gas's .include/.incbin has none.
constexpr std::string_view kMemoFormat = "lexpack-closure-8";

// A probe as stored: its name within `dir` (which base::dir_of(probe) returned).
std::string_view probe_name(std::string_view dir, std::string_view probe) {
  std::string_view name = probe.substr(dir.size());
  if (!name.empty() && name[0] == '/') name.remove_prefix(1);
  return name;
}

// O_PATH handles on the directories of the checked paths, opened on first
// use. fstatat(handle, name) answers exactly what stat(dir/name) answers
// (symlinks followed the same way) without walking dir again for every file.
class DirHandles : public MemoStatSource {
 public:
  DirHandles() = default;
  DirHandles(const DirHandles&) = delete;
  DirHandles& operator=(const DirHandles&) = delete;
  ~DirHandles() override {
    for (const auto& [dir, fd] : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }

  // stat(2) of `path`, following symlinks: false unless it is a regular file.
  bool stat_file(std::string_view path, base::StatSignature* sig) override {
    struct stat st;
    if (!stat_path(path, &st) || !S_ISREG(st.st_mode)) return false;
    *sig = base::signature_of(st);
    return true;
  }

  // stat(2) of `path`: false unless it is a directory.
  bool stat_dir(std::string_view path, base::StatSignature* sig) override {
    struct stat st;
    if (!stat_path(path, &st) || !S_ISDIR(st.st_mode)) return false;
    *sig = base::signature_of(st);
    return true;
  }

 private:
  bool stat_path(std::string_view path, struct stat* st) {
    size_t slash = path.rfind('/');
    // Nothing to share for a name in the working directory, a bare "/" or a
    // path ending in a slash: ask for the path as given.
    if (slash == std::string::npos || slash + 1 == path.size()) {
      return ::stat(path.empty() ? "." : terminated(path), st) == 0;
    }
    int fd = dir_fd(path.substr(0, slash == 0 ? 1 : slash));
    if (fd < 0) return ::stat(terminated(path), st) == 0;
    return ::fstatat(fd, terminated(path.substr(slash + 1)), st, 0) == 0;
  }

  // `s` with a terminating NUL, in a buffer reused for every call.
  const char* terminated(std::string_view s) {
    name_.assign(s);
    return name_.c_str();
  }

  int dir_fd(std::string_view dir) {
    auto it = fds_.find(dir);
    if (it != fds_.end()) return it->second;
    // Keep well clear of the descriptor limit: beyond this, plain stat(2).
    if (fds_.size() >= kMaxHandles) return -1;
    std::string key(dir);
    int fd = -1;
    // A subdirectory of a directory already open: one lookup, not a walk.
    size_t slash = key.rfind('/');
    if (slash != std::string::npos && slash > 0 && slash + 1 < key.size()) {
      auto parent = fds_.find(std::string_view(key).substr(0, slash));
      if (parent != fds_.end() && parent->second >= 0) {
        fd = ::openat(parent->second, key.c_str() + slash + 1, O_PATH | O_DIRECTORY | O_CLOEXEC);
      } else {
        fd = ::open(key.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      }
    } else {
      fd = ::open(key.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    fds_.emplace(std::move(key), fd);
    return fd;
  }

  static constexpr size_t kMaxHandles = 256;
  base::ViewMap<int> fds_;  // looked up by view: no string built per checked file
  std::string name_;
};

// A memo whose paths are views: into the stored bytes on a hit (no string
// built per path), or into a ClosureMemo.
struct MemoView {
  struct Dependency {
    std::string_view path;
    base::StatSignature stat;
    cache::Hash128 content;
  };
  struct ProbedDir {
    std::string_view dir;
    bool exists = false;
    bool check_each = false;
    base::StatSignature stat;
    size_t first_probe = 0;  // into probes
    size_t probe_count = 0;
  };
  std::vector<Dependency> dependencies;
  std::vector<ProbedDir> probed_dirs;
  std::vector<std::string_view> probes;  // names within their ProbedDir's dir
  std::vector<std::string_view> absent_dirs;
  // Pairs of search dirs, dropped then kept (SearchList::same_dirs).
  std::vector<std::string_view> same_dirs;
  struct Vouched {
    std::string_view ancestor;
    base::StatSignature stat;
    size_t first_dir = 0;  // into vouched_dirs
    size_t dir_count = 0;
  };
  std::vector<Vouched> vouched;
  std::vector<std::string_view> vouched_dirs;
  // Empty again, each vector keeping its room for the next memo.
  void clear() {
    dependencies.clear();
    probed_dirs.clear();
    probes.clear();
    absent_dirs.clear();
    same_dirs.clear();
    vouched.clear();
    vouched_dirs.clear();
  }
};

std::string check_view(const MemoView& m, MemoStatSource* stats, const ContentLookup* content,
                       std::vector<MemoRefresh>* refresh) {
  using Kind = MemoRefresh::Kind;
  DirHandles handles;
  MemoStatSource& dirs = stats ? *stats : handles;
  for (size_t i = 0; i < m.dependencies.size(); ++i) {
    const auto& d = m.dependencies[i];
    base::StatSignature now;
    if (!dirs.stat_file(d.path, &now)) return "missing: " + std::string(d.path);
    if (now == d.stat) continue;
    // Rewritten with the same bytes (a fresh configure's generated header):
    // one hash, shared by every process through the file table.
    std::optional<cache::Hash128> same;
    if (content && *content && !d.content.is_zero()) same = (*content)(d.path, now);
    if (!same || !(*same == d.content)) return "changed: " + std::string(d.path);
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

// The path fields of the encoding as views into `bytes`.
bool read_view(base::VarintReader* r, std::string_view bytes, std::string_view* out) {
  uint64_t n = 0;
  if (!r->u64(&n) || n > bytes.size() - r->pos()) return false;
  *out = bytes.substr(r->pos(), n);
  return r->skip(n);
}

}  // namespace

namespace {

// The one writer of the layout decode_closure_memo() and
// check_encoded_closure_memo() read.
std::string encode_view(const MemoView& m, const cache::Hash128& action_key, bool uses_date) {
  // At most 10 bytes per number, 5 numbers per signature.
  size_t size = kMemoFormat.size() + 64;
  for (const auto& d : m.dependencies) size += d.path.size() + 60;
  for (const auto& d : m.probed_dirs) size += d.dir.size() + 71;
  for (std::string_view p : m.probes) size += p.size() + 10;
  for (std::string_view d : m.absent_dirs) size += d.size() + 10;
  for (std::string_view d : m.same_dirs) size += d.size() + 10;
  for (const auto& v : m.vouched) size += v.ancestor.size() + 70;
  for (std::string_view d : m.vouched_dirs) size += d.size() + 10;
  base::VarintWriter w;
  w.reserve(size);
  w.str(kMemoFormat);
  w.u64(action_key.lo);
  w.u64(action_key.hi);
  w.u8(uses_date ? 1 : 0);
  w.u64(m.dependencies.size());
  for (const auto& d : m.dependencies) {
    w.str(d.path);
    base::write_signature(&w, d.stat);
    w.u64(d.content.lo);
    w.u64(d.content.hi);
  }
  w.u64(m.probed_dirs.size());
  for (const auto& d : m.probed_dirs) {
    w.str(d.dir);
    w.u8(uint8_t((d.exists ? 1 : 0) | (d.check_each ? 2 : 0)));
    base::write_signature(&w, d.stat);
    w.u64(d.probe_count);
    for (size_t i = d.first_probe; i < d.first_probe + d.probe_count; ++i) w.str(m.probes[i]);
  }
  w.u64(m.absent_dirs.size());
  for (std::string_view d : m.absent_dirs) w.str(d);
  w.u64(m.vouched.size());
  for (const auto& v : m.vouched) {
    w.str(v.ancestor);
    base::write_signature(&w, v.stat);
    w.u64(v.dir_count);
    for (size_t k = v.first_dir; k < v.first_dir + v.dir_count; ++k) w.str(m.vouched_dirs[k]);
  }
  w.u64(m.same_dirs.size());
  for (std::string_view d : m.same_dirs) w.str(d);
  return w.take();
}

MemoView view_of(const ClosureMemo& m) {
  MemoView v;
  v.dependencies.reserve(m.dependencies.size());
  for (const auto& d : m.dependencies) v.dependencies.push_back({d.path, d.stat, d.content});
  for (const auto& d : m.probed_dirs) {
    v.probed_dirs.push_back(
        {d.dir, d.exists, d.check_each, d.stat, v.probes.size(), d.probes.size()});
    for (const std::string& p : d.probes) v.probes.push_back(probe_name(d.dir, p));
  }
  v.absent_dirs.assign(m.absent_dirs.begin(), m.absent_dirs.end());
  for (const auto& g : m.vouched) {
    v.vouched.push_back({g.ancestor, g.stat, v.vouched_dirs.size(), g.dirs.size()});
    v.vouched_dirs.insert(v.vouched_dirs.end(), g.dirs.begin(), g.dirs.end());
  }
  v.same_dirs.assign(m.same_dirs.begin(), m.same_dirs.end());
  return v;
}

}  // namespace

namespace {

// Signatures are judged settled by `now`.
std::optional<std::string> encode_memo_at(const Closure& closure, const compiler::SearchList& list,
                                          const cache::Hash128& action_key, ScanFileCache* shared,
                                          const std::string& cwd, int64_t now) {
  MemoView m;
  m.dependencies.reserve(closure.files.size());
  for (const ClosureFile& f : closure.files) {
    if (!base::signature_is_settled(f.stat, now)) return std::nullopt;
    // A #pragma once twin whose signature moves may have joined or left its
    // twin's mtime or inode: the key is made again (content zero).
    m.dependencies.push_back({f.path, f.stat, f.once_twin ? cache::Hash128{} : f.content});
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
  std::vector<int32_t> group_of;  // by directory number, -1 for none yet
  struct Group {
    std::string_view dir;
    std::vector<std::string_view> names;
    std::vector<uint32_t> candidates;  // per name when `numbered`
  };
  std::vector<Group> groups;
  for (size_t i = 0; i < closure.failed_probes.size(); ++i) {
    std::string_view p = closure.failed_probes[i];
    uint32_t id = dir_ids[i];
    if (id >= group_of.size()) group_of.resize(id + 1 + group_of.size() / 2, -1);
    if (group_of[id] < 0) {
      group_of[id] = int32_t(groups.size());
      groups.push_back({base::dir_of(p), {}, {}});
    }
    Group& g = groups[size_t(group_of[id])];
    g.names.push_back(probe_name(g.dir, p));
    if (numbered) g.candidates.push_back(closure.failed_probe_ids[i]);
  }
  std::sort(groups.begin(), groups.end(),
            [](const Group& a, const Group& b) { return a.dir < b.dir; });
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
  VouchedGroups vouched(shared ? cwd : std::string());
  for (const Group& group : groups) {
    const std::vector<std::string_view>& names = group.names;
    MemoView::ProbedDir d;
    d.dir = group.dir;
    std::string dir(d.dir);
    const std::optional<base::StatSignature>& sig = dir_sig(dir);
    d.exists = sig.has_value();
    if (sig) d.stat = *sig;
    if (!d.exists && vouched.add(dir, dir_sig, now)) continue;
    d.check_each = d.exists && !base::signature_is_settled(d.stat, now);
    d.first_probe = m.probes.size();
    if (d.exists) {
      // A probe that is some entry (a dangling symlink) may resolve later
      // with the directory unchanged: then each probe is checked.
      for (size_t k = 0; k < names.size() && !d.check_each; ++k) {
        // Once per scan for the scan's probes (dir_sig took the directory's
        // signature first).
        if (!shared) {
          d.check_each = !no_entry(base::join_path(dir, names[k]));
        } else if (numbered && !dir.empty() && dir[0] == '/') {
          d.check_each = !shared->candidate_no_entry_once(group.candidates[k], dir, names[k]);
        } else {
          const std::string probe = base::join_path(dir, names[k]);
          d.check_each = !shared->no_entry_once(base::absolute_path(probe, cwd));
        }
      }
      d.probe_count = names.size();
      m.probes.insert(m.probes.end(), names.begin(), names.end());
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
                                               ScanFileCache* shared, const std::string& cwd) {
  if (!list.memoizable) return std::nullopt;  // see SearchList::memoizable
  // Settled means settled when stat'ed: a scan's stats may be minutes old, but
  // none is older than its cache.
  int64_t now = shared ? shared->created_ns() : base::now_ns();
  return encode_memo_at(closure, list, action_key, shared, cwd, now);
}

std::string encode_explain_memo(const Closure& closure, const compiler::SearchList& list,
                                const cache::Hash128& action_key) {
  std::optional<std::string> memo =
      encode_memo_at(closure, list, action_key, nullptr, {}, std::numeric_limits<int64_t>::max());
  return memo ? *memo : std::string();
}

std::string encode_closure_memo(const ClosureMemo& m) {
  return encode_view(view_of(m), m.action_key, m.uses_date);
}

bool decode_closure_memo(std::string_view bytes, ClosureMemo* m) {
  base::VarintReader r(bytes);
  std::string tag;
  uint8_t flags = 0;
  uint64_t n = 0;
  if (!r.str(&tag) || tag != kMemoFormat || !r.u64(&m->action_key.lo) ||
      !r.u64(&m->action_key.hi) || !r.u8(&flags) || !r.u64(&n) || n > bytes.size()) {
    return false;
  }
  m->uses_date = flags & 1;
  m->dependencies.resize(n);
  for (auto& d : m->dependencies) {
    if (!r.str(&d.path) || !base::read_signature(&r, &d.stat) || !r.u64(&d.content.lo) ||
        !r.u64(&d.content.hi)) {
      return false;
    }
  }
  if (!r.u64(&n) || n > bytes.size()) return false;
  m->probed_dirs.resize(n);
  for (auto& d : m->probed_dirs) {
    uint64_t count = 0;
    if (!r.str(&d.dir) || !r.u8(&flags) || !base::read_signature(&r, &d.stat) || !r.u64(&count) ||
        count > bytes.size()) {
      return false;
    }
    d.exists = flags & 1;
    d.check_each = flags & 2;
    d.probes.resize(count);
    for (std::string& p : d.probes) {
      std::string name;
      if (!r.str(&name)) return false;
      p = base::join_path(d.dir, name);
    }
  }
  if (!r.u64(&n) || n > bytes.size()) return false;
  m->absent_dirs.resize(n);
  for (std::string& d : m->absent_dirs) {
    if (!r.str(&d)) return false;
  }
  if (!r.u64(&n) || n > bytes.size()) return false;
  m->vouched.resize(n);
  for (auto& v : m->vouched) {
    uint64_t count = 0;
    if (!r.str(&v.ancestor) || !base::read_signature(&r, &v.stat) || !r.u64(&count) ||
        count > bytes.size()) {
      return false;
    }
    v.dirs.resize(count);
    for (std::string& d : v.dirs) {
      if (!r.str(&d)) return false;
    }
  }
  if (!r.u64(&n) || n > bytes.size() || n % 2 != 0) return false;
  m->same_dirs.resize(n);
  for (std::string& d : m->same_dirs) {
    if (!r.str(&d)) return false;
  }
  return r.done();
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

namespace {

// The fields of encoded memo `bytes` as views into it; false when it is not
// a memo.
bool parse_view(std::string_view bytes, MemoView* out, cache::Hash128* action_key,
                bool* uses_date) {
  // The same format decode_closure_memo() reads, every path left in place.
  base::VarintReader r(bytes);
  std::string_view tag;
  uint8_t flags = 0;
  uint64_t n = 0;
  if (!read_view(&r, bytes, &tag) || tag != kMemoFormat || !r.u64(&action_key->lo) ||
      !r.u64(&action_key->hi) || !r.u8(&flags) || !r.u64(&n) || n > bytes.size()) {
    return false;
  }
  *uses_date = flags & 1;
  MemoView& m = *out;
  m.clear();
  m.dependencies.resize(n);
  for (auto& d : m.dependencies) {
    if (!read_view(&r, bytes, &d.path) || !base::read_signature(&r, &d.stat) ||
        !r.u64(&d.content.lo) || !r.u64(&d.content.hi)) {
      return false;
    }
  }
  if (!r.u64(&n) || n > bytes.size()) return false;
  m.probed_dirs.resize(n);
  for (auto& d : m.probed_dirs) {
    uint64_t count = 0;
    if (!read_view(&r, bytes, &d.dir) || !r.u8(&flags) || !base::read_signature(&r, &d.stat) ||
        !r.u64(&count) || count > bytes.size()) {
      return false;
    }
    d.exists = flags & 1;
    d.check_each = flags & 2;
    d.first_probe = m.probes.size();
    d.probe_count = count;
    for (uint64_t i = 0; i < count; ++i) {
      std::string_view p;
      if (!read_view(&r, bytes, &p)) return false;
      m.probes.push_back(p);
    }
  }
  if (!r.u64(&n) || n > bytes.size()) return false;
  m.absent_dirs.resize(n);
  for (std::string_view& d : m.absent_dirs) {
    if (!read_view(&r, bytes, &d)) return false;
  }
  if (!r.u64(&n) || n > bytes.size()) return false;
  m.vouched.resize(n);
  for (auto& v : m.vouched) {
    uint64_t count = 0;
    if (!read_view(&r, bytes, &v.ancestor) || !base::read_signature(&r, &v.stat) ||
        !r.u64(&count) || count > bytes.size()) {
      return false;
    }
    v.first_dir = m.vouched_dirs.size();
    v.dir_count = count;
    for (uint64_t i = 0; i < count; ++i) {
      std::string_view d;
      if (!read_view(&r, bytes, &d)) return false;
      m.vouched_dirs.push_back(d);
    }
  }
  if (!r.u64(&n) || n > bytes.size() || n % 2 != 0) return false;
  m.same_dirs.resize(n);
  for (std::string_view& d : m.same_dirs) {
    if (!read_view(&r, bytes, &d)) return false;
  }
  return r.done();
}

// Merges memos' views into one: each dependency once (by path, signature
// and content), each probed directory once per signature with the probes of
// every memo that probed it, each vouching ancestor likewise, each absent
// directory once. Entries that differ in what a check compares are kept side
// by side, so the check of the union fails where any memo's would.
class ViewUnion {
 public:
  // Adds `m`; the views it keeps are copied once each into this union, so
  // `m` need not outlive the call.
  void add(const MemoView& m) {
    for (const auto& d : m.dependencies) {
      auto it = dep_by_path_.find(d.path);
      if (it != dep_by_path_.end()) {
        const auto& kept = deps_[it->second];
        if (kept.stat == d.stat && kept.content == d.content) continue;
      } else {
        it = dep_by_path_.emplace(keep(d.path), deps_.size()).first;
      }
      deps_.push_back({it->first, d.stat, d.content});
    }
    for (const auto& p : m.probed_dirs) {
      size_t at = group(&probed_by_dir_, &probed_, p.dir, [&](const Probed& k) {
        return k.exists == p.exists && k.check_each == p.check_each && k.stat == p.stat;
      });
      if (at == probed_.size())
        probed_.push_back({keep(p.dir), p.exists, p.check_each, p.stat, {}, {}});
      for (size_t i = p.first_probe; i < p.first_probe + p.probe_count; ++i) {
        if (!probed_[at].seen.count(m.probes[i])) {
          std::string_view name = keep(m.probes[i]);
          probed_[at].seen.insert(name);
          probed_[at].names.push_back(name);
        }
      }
    }
    for (const auto& v : m.vouched) {
      size_t at = group(&vouched_by_dir_, &vouched_, v.ancestor,
                        [&](const Vouched& k) { return k.stat == v.stat; });
      if (at == vouched_.size()) vouched_.push_back({keep(v.ancestor), v.stat, {}, {}});
      for (size_t i = v.first_dir; i < v.first_dir + v.dir_count; ++i) {
        if (!vouched_[at].seen.count(m.vouched_dirs[i])) {
          std::string_view dir = keep(m.vouched_dirs[i]);
          vouched_[at].seen.insert(dir);
          vouched_[at].names.push_back(dir);
        }
      }
    }
    for (std::string_view d : m.absent_dirs) {
      if (!absent_seen_.count(d)) {
        std::string_view dir = keep(d);
        absent_seen_.insert(dir);
        absent_.push_back(dir);
      }
    }
    for (size_t i = 0; i + 1 < m.same_dirs.size(); i += 2) {
      std::string pair = std::string(m.same_dirs[i]) + '\0' + std::string(m.same_dirs[i + 1]);
      if (same_seen_.insert(pair).second) {
        same_.push_back(keep(m.same_dirs[i]));
        same_.push_back(keep(m.same_dirs[i + 1]));
      }
    }
  }

  // The union as one view (into this union).
  void take(MemoView* out) const {
    out->clear();
    out->dependencies = deps_;
    for (const Probed& p : probed_) {
      out->probed_dirs.push_back(
          {p.dir, p.exists, p.check_each, p.stat, out->probes.size(), p.names.size()});
      out->probes.insert(out->probes.end(), p.names.begin(), p.names.end());
    }
    for (const Vouched& v : vouched_) {
      out->vouched.push_back({v.dir, v.stat, out->vouched_dirs.size(), v.names.size()});
      out->vouched_dirs.insert(out->vouched_dirs.end(), v.names.begin(), v.names.end());
    }
    out->absent_dirs = absent_;
    out->same_dirs = same_;
  }

 private:
  using Names = std::vector<std::string_view>;
  using Seen = std::unordered_set<std::string_view>;
  struct Probed {
    std::string_view dir;
    bool exists, check_each;
    base::StatSignature stat;
    Names names;
    Seen seen;
  };
  struct Vouched {
    std::string_view dir;
    base::StatSignature stat;
    Names names;
    Seen seen;
  };
  // The index in `all` of the entry for `dir` that `same` accepts, or
  // all->size() (then noted as the one for `dir` that comes next).
  template <class T, class Same>
  size_t group(std::unordered_multimap<std::string_view, size_t>* by_dir, std::vector<T>* all,
               std::string_view dir, Same same) {
    auto [first, last] = by_dir->equal_range(dir);
    for (auto it = first; it != last; ++it) {
      if (same((*all)[it->second])) return it->second;
    }
    by_dir->emplace(keep(dir), all->size());
    return all->size();
  }
  // `s` copied once into this union.
  std::string_view keep(std::string_view s) {
    auto it = kept_.find(s);
    if (it == kept_.end()) it = kept_.emplace(s).first;
    return *it;
  }
  std::vector<MemoView::Dependency> deps_;
  std::unordered_map<std::string_view, size_t> dep_by_path_;
  std::vector<Probed> probed_;
  std::unordered_multimap<std::string_view, size_t> probed_by_dir_;
  std::vector<Vouched> vouched_;
  std::unordered_multimap<std::string_view, size_t> vouched_by_dir_;
  Names absent_;
  Seen absent_seen_;
  Names same_;  // pairs
  std::unordered_set<std::string> same_seen_;
  std::unordered_set<std::string, base::ViewHash, std::equal_to<>> kept_;
};

}  // namespace

struct ClosureMemoUnion::Impl {
  ViewUnion all;
};

ClosureMemoUnion::ClosureMemoUnion() : impl_(std::make_unique<Impl>()) {}
ClosureMemoUnion::~ClosureMemoUnion() = default;

bool ClosureMemoUnion::add(std::string_view memo) {
  thread_local MemoView m;
  cache::Hash128 action_key;
  bool uses_date = false;
  if (!parse_view(memo, &m, &action_key, &uses_date)) return false;
  impl_->all.add(m);
  return true;
}

std::string ClosureMemoUnion::encode() const {
  MemoView m;
  impl_->all.take(&m);
  return encode_view(m, cache::Hash128{}, false);
}

bool closure_memo_dependencies(std::string_view bytes, std::vector<std::string_view>* paths) {
  thread_local MemoView m;
  cache::Hash128 action_key;
  bool uses_date = false;
  if (!parse_view(bytes, &m, &action_key, &uses_date)) return false;
  paths->clear();
  paths->reserve(m.dependencies.size());
  for (const auto& d : m.dependencies) paths->push_back(d.path);
  return true;
}

bool check_encoded_closure_memo(std::string_view bytes, MemoStatSource* stats,
                                cache::Hash128* action_key, bool* uses_date, std::string* changed,
                                std::vector<std::string_view>* dependencies,
                                const ContentLookup* content, std::vector<MemoRefresh>* refresh) {
  // One view per thread, reused: a warm scan checks a memo per TU, each with
  // thousands of entries, and fresh vectors would be written into fresh pages.
  thread_local MemoView reused;
  MemoView& m = reused;
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
