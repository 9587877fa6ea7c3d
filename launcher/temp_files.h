// Temporary files that must not outlive an interrupted lexpack: while a
// guard lives, SIGINT, SIGTERM, SIGHUP or SIGQUIT unlink its file before the
// signal takes its usual course.
#pragma once

#include <string>

namespace lexpack::launcher {

class TempFileGuard {
 public:
  // Registers `path` (at most a few at a time; more are not guarded).
  explicit TempFileGuard(const std::string& path);
  ~TempFileGuard();  // unregisters; does not unlink
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace lexpack::launcher
