// A non-owning reference to a callable, for callbacks that run before the
// call that takes them returns (index transactions): unlike std::function it
// never allocates, which matters on the blob read path (internal to cache/).
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace lexpack::cache {

template <class Signature>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  // The callable must outlive every call through this reference; a lambda
  // passed as an argument lives until the end of the full expression.
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef> &&
                                              std::is_invocable_r_v<R, F&, Args...>>>
  FunctionRef(F&& f)  // NOLINT: implicit, like std::function
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace lexpack::cache
