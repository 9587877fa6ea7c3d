// Work that every process of a fresh cache would otherwise repeat at once:
// with ninja -j N, the first N compiles all ask the compiler for its identity
// and search list before any of them has stored the answer. The first
// process to want a result computes it under a lock; the others wait for
// that process (a bounded time) and then read what it stored.
#pragma once

#include <string>
#include <string_view>

namespace lexpack::cache {

class ComputeOnce {
 public:
  // Takes the lock named after `what` in `dir`/locks/, waiting
  // at most `max_wait_ms` for a process that holds it. Without a usable lock
  // file (a read-only cache) nothing is waited for.
  ComputeOnce(const std::string& dir, std::string_view what, int max_wait_ms = 5000);
  ~ComputeOnce();
  ComputeOnce(const ComputeOnce&) = delete;
  ComputeOnce& operator=(const ComputeOnce&) = delete;

  // True when another process held the lock on arrival: what it computed
  // may be stored by now, so look again before computing.
  bool waited() const { return waited_; }

 private:
  int fd_ = -1;
  bool waited_ = false;
};

}  // namespace lexpack::cache
