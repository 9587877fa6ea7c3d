// How long one direction of a transfer may take, judged by its progress: the
// same rule for the plain HTTP backend and for lexpack-https (a separate
// program linked with libcurl only, so this header needs nothing else).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

namespace lexpack::cache::remote {

// The first byte within a first-byte limit, then (after a short grace) at
// least a minimum rate on average.
class Pace {
 public:
  using Clock = std::chrono::steady_clock;

  // `first_byte_ms`: how long the first byte may take, counted from now plus
  // `setup_ms` (a connection still to be made); <= 0: no limit. `min_rate`:
  // bytes per second; <= 0: no rate check. `started`: the first byte counts
  // as come now (a send).
  Pace(int64_t first_byte_ms, int64_t min_rate, bool started, int64_t setup_ms = 0)
      : first_byte_ms_(first_byte_ms), setup_ms_(setup_ms), rate_(min_rate) {
    if (started) first_ = start_;
    got_ = started;
  }
  // `n` more bytes moved.
  void add(uint64_t n) {
    if (!got_) first_ = Clock::now();
    got_ = true;
    bytes_ += n;
  }
  uint64_t bytes() const { return bytes_; }
  // When the transfer is too slow unless more bytes come before it.
  Clock::time_point give_up() const {
    if (!got_) {
      if (first_byte_ms_ <= 0) return Clock::time_point::max();
      return start_ + std::chrono::milliseconds(setup_ms_ + first_byte_ms_);
    }
    if (rate_ <= 0) return Clock::time_point::max();
    return first_ + kGrace + std::chrono::microseconds(bytes_ * 1'000'000 / uint64_t(rate_));
  }
  bool too_slow() const { return Clock::now() >= give_up(); }
  std::string why() const {
    if (!got_) return "no reply within " + std::to_string(first_byte_ms_) + " ms";
    return "slower than " + std::to_string(rate_) + " bytes/s";
  }

 private:
  static constexpr std::chrono::milliseconds kGrace{200};
  int64_t first_byte_ms_;
  int64_t setup_ms_;
  int64_t rate_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point first_;
  bool got_ = false;
  uint64_t bytes_ = 0;
};

// Milliseconds until `deadline` for poll(2), in [0, INT_MAX]: a check turned
// off gives time_point::max(), whose distance in milliseconds does not fit
// an int (cast, it can turn negative, and poll would wait forever).
inline int poll_ms_until(Pace::Clock::time_point deadline) {
  const Pace::Clock::time_point now = Pace::Clock::now();
  if (deadline <= now) return 0;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
  return int(std::min<int64_t>(left.count(), std::numeric_limits<int>::max()));
}

}  // namespace lexpack::cache::remote
