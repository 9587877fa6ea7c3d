// The twin groups of #pragma once files (once_twins.h): found by content
// among the few files that hold the pragma, so a closure without twins pays
// one hash-map insert per such file.
#include "closure/once_twins.h"

#include <unordered_map>

namespace lexpack::closure {
namespace {

struct ContentHash {
  size_t operator()(const cache::Hash128& h) const { return size_t(h.lo ^ (h.hi * 31)); }
};

int64_t mtime_seconds(const base::StatSignature& s) {
  int64_t sec = s.mtime_ns / 1000000000;
  if (s.mtime_ns % 1000000000 < 0) --sec;  // floor, as st_mtime
  return sec;
}

// Per group, the members (closure file numbers) in closure order.
std::vector<std::vector<size_t>> twin_groups(const Closure& closure) {
  std::unordered_map<cache::Hash128, size_t, ContentHash> group_of;
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < closure.files.size(); ++i) {
    const ClosureFile& f = closure.files[i];
    if (!f.once_twin) continue;
    auto [it, fresh] = group_of.emplace(f.content, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

}  // namespace

std::string once_twin_partition(const std::vector<size_t>& once_files, Closure* closure) {
  if (once_files.size() < 2) return "";
  std::unordered_map<cache::Hash128, size_t, ContentHash> first;  // content -> a file number
  std::vector<size_t> twins;
  for (size_t i : once_files) {
    ClosureFile& f = closure->files[i];
    if (f.presence_only || f.opaque || f.content.is_zero()) continue;
    auto [it, fresh] = first.emplace(f.content, i);
    if (fresh || it->second == i) continue;
    f.once_twin = true;
    closure->files[it->second].once_twin = true;
  }
  std::string out;
  for (const std::vector<size_t>& members : twin_groups(*closure)) {
    // For each member, the first member with its mtime second and the first
    // with its inode: equal lists, equal partitions.
    out += "group " + std::to_string(members.size()) + ":";
    for (size_t k = 0; k < members.size(); ++k) {
      const base::StatSignature& s = closure->files[members[k]].stat;
      size_t same_time = k, same_inode = k;
      for (size_t j = 0; j < k; ++j) {
        const base::StatSignature& o = closure->files[members[j]].stat;
        if (same_time == k && mtime_seconds(o) == mtime_seconds(s)) same_time = j;
        if (same_inode == k && o.dev == s.dev && o.ino == s.ino) same_inode = j;
      }
      out += " " + std::to_string(members[k]) + "/" + std::to_string(same_time) + "/" +
             std::to_string(same_inode);
    }
    out += ";";
  }
  return out;
}

bool once_twins_merged_by_time(const Closure& closure) {
  for (const std::vector<size_t>& members : twin_groups(closure)) {
    for (size_t k = 0; k < members.size(); ++k) {
      const base::StatSignature& s = closure.files[members[k]].stat;
      for (size_t j = 0; j < k; ++j) {
        const base::StatSignature& o = closure.files[members[j]].stat;
        if (mtime_seconds(o) == mtime_seconds(s) && !(o.dev == s.dev && o.ino == s.ino)) {
          return true;
        }
      }
    }
  }
  return false;
}

}  // namespace lexpack::closure
