// The launcher's decision log: one line per compile (hit, miss and why,
// passthrough and why) appended to the file LEXPACK_LOGFILE names.
#pragma once

#include <string>
#include <string_view>

namespace lexpack::launcher {

class DecisionLog {
 public:
  // Reads LEXPACK_LOGFILE; logging is off when it is unset or empty.
  DecisionLog();
  ~DecisionLog();
  DecisionLog(const DecisionLog&) = delete;
  DecisionLog& operator=(const DecisionLog&) = delete;

  void set_subject(std::string subject) { subject_ = std::move(subject); }
  // Appends "lexpack[pid] <subject>: <line>" in one write.
  void write(std::string_view line);
  bool enabled() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
  std::string subject_;
};

}  // namespace lexpack::launcher
