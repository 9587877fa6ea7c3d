// The answer to one include search: which file, and where in the search it
// was found (which #include_next needs).
#pragma once

#include <string>

#include "cache/store.h"

namespace lexpack::closure {

// Where a file was found, for #include_next.
inline constexpr int kFoundOutsideChain = -1;  // the source, or a path used as is
inline constexpr int kFoundInIncluderDir = -2;

struct Resolution {
  bool found = false;
  std::string path;  // as the compiler names it: dir + "/" + name
  int chain_index = kFoundOutsideChain;
  base::StatSignature stat;
};

}  // namespace lexpack::closure
