// The archive and link launcher: `lexpack ar qc lib.a a.o ...`,
// `lexpack ranlib lib.a`, `lexpack g++ a.o -o app ...`. Serves the output of
// a step whose tools, command and every file read are unchanged; otherwise
// runs the step, learns what the linker read and stores the output.
#pragma once

#include <string>
#include <vector>

#include "link/link_step.h"

namespace lexpack::link {

struct LinkResult {
  bool exec_tool = false;  // the caller must replace itself by argv (passthrough)
  int exit_code = 0;
  std::string out;
  std::string err;
  std::string error;  // non-empty: the tool could not be run at all
  std::string explanation;
};

// Runs `step` (parsed from `argv`; its kind is not kNone). With `explain`,
// nothing runs or is written: the result says whether the step would hit.
LinkResult launch_link_step(const LinkStep& step, const std::vector<std::string>& argv,
                            bool explain);

}  // namespace lexpack::link
