// ClosureMemoUnion: the memos of many TUs merged into one whose check fails
// exactly when one of theirs would, so a whole-build scan checks each fact
// once (see closure_memo.h).
#include "closure/closure_memo.h"

#include <functional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "base/view_map.h"
#include "closure/memo_format.h"

namespace lexpack::closure {
namespace {

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

}  // namespace lexpack::closure
