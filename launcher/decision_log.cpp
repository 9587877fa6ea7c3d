// O_APPEND and one write(2) per line, so concurrent compiles never
// interleave inside a line.
#include "launcher/decision_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

#include "base/process.h"

namespace lexpack::launcher {

DecisionLog::DecisionLog() {
  const char* path = std::getenv("LEXPACK_LOGFILE");
  if (path && *path) fd_ = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

DecisionLog::~DecisionLog() {
  if (fd_ >= 0) ::close(fd_);
}

void DecisionLog::write(std::string_view line) {
  if (fd_ < 0) return;
  std::string out = "lexpack[" + std::to_string(::getpid()) + "] ";
  if (!subject_.empty()) out += subject_ + ": ";
  out.append(line);
  out.push_back('\n');
  base::write_all(fd_, out);
}

}  // namespace lexpack::launcher
