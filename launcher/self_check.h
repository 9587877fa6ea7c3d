// Every miss tests the scanner: the compiler's own depfile is compared with
// the scanned closure. Files the compiler read that the scan did not reach
// are kept with the cached entry (and checked on each hit), together with the
// search candidates around them.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/file_stat.h"
#include "base/status.h"
#include "closure/dependency_closure.h"
#include "closure/file_state.h"
#include "compiler/search_list.h"
#include "launcher/action_payload.h"

namespace lexpack::launcher {

struct SelfCheckResult {
  ActionPayload payload;
  // Extra files not explained by a computed include: the scanner missed them.
  std::vector<std::string> disagreements;
  std::string unsure;  // non-empty: do not store the result (why)
  // The files outside the scan (payload's extra files and present probes)
  // with the signatures the check found.
  std::vector<std::pair<std::string, base::StatSignature>> outside;
  // Each file the depfile names, as it spells it, with the signature the
  // check found (after the compile).
  std::vector<std::pair<std::string, base::StatSignature>> named;
};

SelfCheckResult self_check(std::string_view depfile_text, const closure::Closure& closure,
                           const compiler::SearchList& list, closure::FileStates* files,
                           const std::string& cwd);

}  // namespace lexpack::launcher
