// Every miss tests the scanner: the compiler's own depfile is compared with
// the scanned closure. Files the compiler read that the scan did not reach
// are kept with the cached entry (and checked on each hit), together with the
// search candidates around them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cache/status.h"
#include "ninja_integration/action_payload.h"
#include "ninja_integration/dependency_closure.h"
#include "ninja_integration/file_state.h"
#include "ninja_integration/search_list.h"

namespace lexpack::ninja {

struct SelfCheckResult {
  ActionPayload payload;
  // Extra files not explained by a computed include: the scanner missed them.
  std::vector<std::string> disagreements;
  std::string unsure;  // non-empty: do not store the result (why)
};

SelfCheckResult self_check(std::string_view depfile_text, const Closure& closure,
                           const SearchList& list, FileStates* files, const std::string& cwd);

}  // namespace lexpack::ninja
