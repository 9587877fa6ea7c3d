// Results across folder boundaries: a Status (ok or a message) and Result<T>.
// Library code returns these; only cli/ turns them into output and exit codes.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace lexpack::base {

class Status {
 public:
  Status() = default;
  static Status error(std::string message) { return Status(std::move(message)); }
  bool ok() const { return !failed_; }
  const std::string& message() const { return message_; }

 private:
  explicit Status(std::string message) : failed_(true), message_(std::move(message)) {}
  bool failed_ = false;
  std::string message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status status) : value_(std::move(status)) {}
  bool ok() const { return std::holds_alternative<T>(value_); }
  T& value() { return std::get<T>(value_); }
  const T& value() const { return std::get<T>(value_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  const std::string& message() const { return std::get<Status>(value_).message(); }
  Status status() const { return ok() ? Status() : std::get<Status>(value_); }

 private:
  std::variant<T, Status> value_;
};

}  // namespace lexpack::base
