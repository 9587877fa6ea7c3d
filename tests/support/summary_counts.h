// The counts of a summary line `lexpack ninja` prints ("lexpack: 6 compiles,
// 6 hits, 0 misses, ..."), for the end-to-end suites that check them.
#pragma once

#include <map>
#include <sstream>
#include <string>

namespace lexpack::testing {

// The counts of the last "lexpack: " line of `err`, or of the last one that
// holds `marker` ("archive/link step"), by name: "compiles", "hits",
// "misses", "steps" (archive/link steps), "uncacheable", "failed"... Empty
// when there is none.
inline std::map<std::string, int> summary_counts(const std::string& err,
                                                 const std::string& marker = "") {
  std::map<std::string, int> m;
  size_t at = marker.empty() ? err.rfind("lexpack: ") : err.rfind(marker);
  if (at == std::string::npos) return m;
  at = err.rfind("lexpack: ", at);
  if (at == std::string::npos) return m;
  const size_t start = at + 9;
  std::istringstream in(err.substr(start, err.find('\n', start) - start));
  for (std::string part; std::getline(in, part, ',');) {
    std::istringstream words(part);
    int n = -1;
    std::string name;
    if (words >> n >> name) {
      if (name == "compile" || name == "hit") name += "s";
      if (name == "miss") name = "misses";
      if (name == "archive/link") name = "steps";
      m[name] = n;
    }
  }
  return m;
}

}  // namespace lexpack::testing
