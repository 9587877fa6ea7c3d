// Values computed once per key however many threads ask at the same time:
// the first caller computes, the others wait for its answer. Used for work
// that runs a compiler or reads tens of MB (identities, search lists,
// builtin answers, binaries' digests).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace lexpack::base {

template <typename V>
class OnceMap {
 public:
  template <typename Compute>
  V get(const std::string& key, Compute compute) {
    std::shared_ptr<Slot> slot;
    {
      std::lock_guard lock(mu_);
      std::shared_ptr<Slot>& s = slots_[key];
      if (!s) s = std::make_shared<Slot>();
      slot = s;
    }
    std::call_once(slot->once, [&] { slot->value.emplace(compute()); });
    return *slot->value;
  }

 private:
  struct Slot {
    std::once_flag once;
    std::optional<V> value;
  };
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots_;
};

}  // namespace lexpack::base
