// A map keyed by std::string that is looked up by std::string_view: paths are
// checked and counted by view, with no string built per lookup.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace lexpack::base {

struct ViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

template <typename V>
using ViewMap = std::unordered_map<std::string, V, ViewHash, std::equal_to<>>;

}  // namespace lexpack::base
