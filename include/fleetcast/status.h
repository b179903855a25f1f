// Status and Result<T>: how every fallible call of the public API reports failure.
//
// Nothing throws across include/fleetcast/. A call that can fail returns a Status (no value) or a
// Result<T> (a value or a Status). Codes follow Abseil's canonical set so that embedders can map
// them onto gRPC or HTTP errors. Messages are written for people: they name the file, the line or
// JSON pointer, and what was expected.
//
// Thread-safety: value types; distinct objects may be used from different threads freely.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace fleetcast {

enum class StatusCode : int {
  ok = 0,
  cancelled = 1,
  invalid_argument = 3,
  not_found = 5,
  already_exists = 6,
  permission_denied = 7,
  resource_exhausted = 8,
  failed_precondition = 9,
  out_of_range = 11,
  unimplemented = 12,
  internal = 13,
  unavailable = 14,
  data_loss = 15,
};

/// The lower-case name of a code, e.g. "invalid_argument".
std::string_view status_code_name(StatusCode code) noexcept;

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return {}; }

  [[nodiscard]] bool ok() const noexcept { return code_ == StatusCode::ok; }
  [[nodiscard]] StatusCode code() const noexcept { return code_; }
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  /// "invalid_argument: <message>", or "ok".
  [[nodiscard]] std::string to_string() const;

  /// A copy whose message is "<context>: <message>" (for adding the file name, for example).
  [[nodiscard]] Status with_context(std::string_view context) const;

  friend bool operator==(const Status&, const Status&) = default;

 private:
  StatusCode code_ = StatusCode::ok;
  std::string message_;
};

inline Status invalid_argument_error(std::string message) {
  return {StatusCode::invalid_argument, std::move(message)};
}
inline Status not_found_error(std::string message) { return {StatusCode::not_found, std::move(message)}; }
inline Status failed_precondition_error(std::string message) {
  return {StatusCode::failed_precondition, std::move(message)};
}
inline Status internal_error(std::string message) { return {StatusCode::internal, std::move(message)}; }
inline Status unavailable_error(std::string message) { return {StatusCode::unavailable, std::move(message)}; }
inline Status cancelled_error(std::string message) { return {StatusCode::cancelled, std::move(message)}; }
inline Status out_of_range_error(std::string message) { return {StatusCode::out_of_range, std::move(message)}; }
inline Status data_loss_error(std::string message) { return {StatusCode::data_loss, std::move(message)}; }
inline Status permission_denied_error(std::string message) {
  return {StatusCode::permission_denied, std::move(message)};
}

namespace detail {
/// Reports value() called on an error Result (a contract violation, as Abseil's StatusOr treats
/// it): prints the Status to stderr and aborts. Never returns.
[[noreturn]] void abort_on_value_of_error(const Status& status) noexcept;
/// The error a Result built from an OK Status carries instead: internal, in every build type.
Status ok_status_without_value();
}  // namespace detail

/// A value of type T, or the Status that explains why there is none.
/// A Result built from an OK Status holds an internal error (a bug of the caller, reported as a
/// value rather than an ok() Result without a value). Calling value() (or * and ->) on an error
/// Result is a contract violation: it prints the Status and aborts, in every build type; it never
/// throws.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status)  // NOLINT(google-explicit-constructor)
      : state_(status.ok() ? detail::ok_status_without_value() : std::move(status)) {}

  [[nodiscard]] bool ok() const noexcept { return std::holds_alternative<T>(state_); }
  explicit operator bool() const noexcept { return ok(); }

  /// The error, or an ok Status when there is a value.
  [[nodiscard]] Status status() const {
    const Status* error = std::get_if<Status>(&state_);
    return error == nullptr ? Status{} : *error;
  }

  [[nodiscard]] T& value() & { return *checked(); }
  [[nodiscard]] const T& value() const& { return *checked(); }
  [[nodiscard]] T&& value() && { return std::move(*checked()); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  T* checked() noexcept {
    T* value = std::get_if<T>(&state_);
    if (value == nullptr) detail::abort_on_value_of_error(*std::get_if<Status>(&state_));
    return value;
  }
  const T* checked() const noexcept {
    const T* value = std::get_if<T>(&state_);
    if (value == nullptr) detail::abort_on_value_of_error(*std::get_if<Status>(&state_));
    return value;
  }

  std::variant<T, Status> state_;
};

}  // namespace fleetcast
