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

// Another process (the server, which keeps every header's evaluation it has
// seen) that evaluates a compile's closure. Asked only when the compile has
// no valid memo and its kept closure does not apply.
struct EvaluateElsewhere {
  // Evaluates the closure and stores its closure memo and snapshot
  // (closure_snapshot.h); "" when it did, else why not. `checked_after`:
  // the compile runs already and each file is checked after it, so the
  // evaluator need not check what it kept first.
  std::function<std::string(bool checked_after)> evaluate;
  // Told when a closure given for `checked_after` did not hold after the
  // compile (a change the evaluator did not hear of).
  std::function<void()> did_not_hold;
};

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
