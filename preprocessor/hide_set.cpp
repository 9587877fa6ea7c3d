// Interned hide sets: sorted member lists, one id per distinct set.
#include "preprocessor/hide_set.h"

#include <algorithm>
#include <iterator>

namespace lexpack::preprocessor {

bool HideSets::contains(uint32_t set, uint32_t macro) const {
  const std::vector<uint32_t>& s = sets_[set];
  return std::binary_search(s.begin(), s.end(), macro);
}

uint32_t HideSets::intern(std::vector<uint32_t> members) {
  auto [it, inserted] = ids_.try_emplace(members, static_cast<uint32_t>(sets_.size()));
  if (inserted) sets_.push_back(std::move(members));
  return it->second;
}

uint32_t HideSets::add(uint32_t set, uint32_t macro) {
  if (contains(set, macro)) return set;
  auto [it, inserted] = added_.try_emplace({set, macro}, 0);
  if (!inserted) return it->second;
  std::vector<uint32_t> members = sets_[set];
  members.insert(std::upper_bound(members.begin(), members.end(), macro), macro);
  const uint32_t id = intern(std::move(members));
  added_[{set, macro}] = id;
  return id;
}

uint32_t HideSets::unite(uint32_t a, uint32_t b) {
  if (a == b || b == kEmpty) return a;
  if (a == kEmpty) return b;
  std::vector<uint32_t> members;
  std::set_union(sets_[a].begin(), sets_[a].end(), sets_[b].begin(), sets_[b].end(),
                 std::back_inserter(members));
  return intern(std::move(members));
}

uint32_t HideSets::intersect(uint32_t a, uint32_t b) {
  if (a == b) return a;
  if (a == kEmpty || b == kEmpty) return kEmpty;
  std::vector<uint32_t> members;
  std::set_intersection(sets_[a].begin(), sets_[a].end(), sets_[b].begin(), sets_[b].end(),
                        std::back_inserter(members));
  return intern(std::move(members));
}

}  // namespace lexpack::preprocessor
