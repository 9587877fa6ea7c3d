// What a compile and an archive or link step do alike once their tool has
// run on a miss: the tool's answer taken, a failed tool or a read-only cache
// ending the step unstored, the temporary depfile removed. link/ uses it too.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/process.h"
#include "cache/store.h"

namespace lexpack::launcher {

// The counters and decision-log notes of one kind of step.
struct FinishedRunWords {
  std::string_view failed_counter;  // counted when the tool exits non-zero
  std::string failed_note;          // and logged
  std::string_view miss_counter;    // counted when it succeeds
  std::string_view read_only_note;  // logged when a read-only cache stores nothing
};

using RunCounter = std::function<void(std::string_view)>;
using RunNote = std::function<void(const std::string&)>;

// Takes the tool's answer into `r` (a LaunchResult or a LinkResult): its exit
// code and messages, or 127 and the error when it could not start. Returns
// why the step ends there, unstored ("" when the tool could not start: its
// error says so), or nullopt when its outputs are to be stored.
template <typename StepResult>
std::optional<std::string> take_finished_run(base::ProcessResult& p, bool read_only,
                                             const FinishedRunWords& words, const RunCounter& count,
                                             StepResult* r) {
  r->exit_code = p.exit_code;
  r->out = std::move(p.out);
  r->err = std::move(p.err);
  if (!p.started) {
    r->error = p.error;
    r->exit_code = 127;
    return std::string();
  }
  if (p.exit_code != 0) {
    count(words.failed_counter);
    return words.failed_note;
  }
  count(words.miss_counter);
  if (read_only) return std::string(words.read_only_note);
  return std::nullopt;
}

// What every way out of a step run on a miss does: its temporary depfile
// (none when empty) removed, and why it ended (when said) logged.
void finish_run(const std::string& temp_depfile, const std::string& why, const RunNote& note);

// Stores one output of a step as a blob; empty bytes store nothing and leave
// `id` zero. False, with `error` set, when the store fails.
bool put_output_blob(cache::Store* store, std::string_view bytes, cache::BlobId* id,
                     std::string* error);

}  // namespace lexpack::launcher
