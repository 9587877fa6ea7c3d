// The compile launcher: `lexpack <compiler> <args...>`. Decides hit or miss
// from the dependency closure, serves hits from the store, runs the compiler
// on misses and stores what it produced. Never breaks a build: whatever goes
// wrong inside lexpack, the compiler runs as it would have without it.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace lexpack::launcher {

struct LaunchResult {
  // The caller must replace itself by `argv` unchanged (passthrough).
  bool exec_compiler = false;
  int exit_code = 0;
  std::string out;          // bytes for stdout (the compiler's, replayed or live)
  std::string err;          // bytes for stderr
  std::string error;        // non-empty: the compiler could not be run at all
  std::string explanation;  // explain mode: the report, one finding per line
  std::string warning;      // non-empty: one line for stderr (a setting ignored)
  // The compiler ran here (a miss, stored or not): no entry of the server's
  // is any nearer to a hit for it.
  bool compiled = false;
};

// Has another process (the server, which keeps every header's evaluation it
// has seen) evaluate this compile's closure and store its closure memo and
// snapshot (closure_snapshot.h); "" when it did, else why not. Asked only
// when the compile has no valid memo and its kept closure does not apply.
// The ask says how the launcher checks what it is given.
enum class ElsewhereAsk {
  kCheckedBefore,  // the memo, before it is taken
  // The compile runs already: each file of the closure after it (so the
  // other process need check only the memo's directories).
  kCheckedAfter,
  // kCheckedAfter again: a file of the closure given had changed when
  // checked (what the other process kept may be out of date).
  kAgain,
};
using EvaluateElsewhere = std::function<std::string(ElsewhereAsk)>;

// Runs one compile. `argv[0]` is the compiler. With `explain`, nothing is
// compiled or written: the result only says whether the compile would hit,
// and if not, why. `elsewhere` may be empty: the closure is evaluated here.
LaunchResult launch(const std::vector<std::string>& argv, bool explain,
                    const EvaluateElsewhere& elsewhere = {});

// The memo table of the closure memo each new one replaced: a header edited
// and put back, or a branch switched back and forth, finds its closure there
// instead of computing it again (ccache's manifest keeps several for the
// same reason).
constexpr char kPreviousMemoTable[] = "closure-previous";

}  // namespace lexpack::launcher
