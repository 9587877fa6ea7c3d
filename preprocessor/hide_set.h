// Hide sets (Prosser's expansion algorithm): the macros a token came out of,
// which must not expand it again. Sets are interned, so a token carries one
// small id and equal sets share one entry.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace lexpack::preprocessor {

class HideSets {
 public:
  static constexpr uint32_t kEmpty = 0;

  bool contains(uint32_t set, uint32_t macro) const;
  uint32_t add(uint32_t set, uint32_t macro);
  uint32_t unite(uint32_t a, uint32_t b);
  uint32_t intersect(uint32_t a, uint32_t b);

 private:
  uint32_t intern(std::vector<uint32_t> members);

  std::vector<std::vector<uint32_t>> sets_{{}};  // each sorted; id 0 is empty
  std::map<std::vector<uint32_t>, uint32_t> ids_{{{}, 0}};
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> added_;
};

}  // namespace lexpack::preprocessor
