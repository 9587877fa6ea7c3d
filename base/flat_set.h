// A set that never erases, kept in one array: a walk dedupes thousands of
// answers and candidates per TU, and a node-based set would allocate for each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace lexpack::base {

template <typename T, typename Hash = std::hash<T>>
class FlatSet {
 public:
  explicit FlatSet(size_t expected = 0) {
    while ((size_t(1) << bits_) < expected * 2) ++bits_;
    slots_.resize(size_t(1) << bits_);
    used_.assign(size_t(1) << bits_, 0);
  }

  // True when `value` was not in the set (it is now).
  bool insert(const T& value) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    const size_t mask = slots_.size() - 1;
    // Fibonacci hashing spreads aligned pointers and weak hashes alike.
    for (size_t i = size_t((uint64_t(Hash{}(value)) * 0x9E3779B97F4A7C15ull) >> (64 - bits_));;
         i = (i + 1) & mask) {
      if (!used_[i]) {
        used_[i] = 1;
        slots_[i] = value;
        ++size_;
        return true;
      }
      if (slots_[i] == value) return false;
    }
  }

  size_t size() const { return size_; }

 private:
  void grow() {
    FlatSet bigger(slots_.size());
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (used_[i]) bigger.insert(slots_[i]);
    }
    *this = std::move(bigger);
  }

  int bits_ = 4;
  std::vector<T> slots_;
  std::vector<uint8_t> used_;
  size_t size_ = 0;
};

}  // namespace lexpack::base
