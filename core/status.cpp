#include "fleetcast/status.h"

#include <cstdio>
#include <cstdlib>

namespace fleetcast {

std::string_view status_code_name(StatusCode code) noexcept {
  switch (code) {
    case StatusCode::ok: return "ok";
    case StatusCode::cancelled: return "cancelled";
    case StatusCode::invalid_argument: return "invalid_argument";
    case StatusCode::not_found: return "not_found";
    case StatusCode::already_exists: return "already_exists";
    case StatusCode::permission_denied: return "permission_denied";
    case StatusCode::resource_exhausted: return "resource_exhausted";
    case StatusCode::failed_precondition: return "failed_precondition";
    case StatusCode::out_of_range: return "out_of_range";
    case StatusCode::unimplemented: return "unimplemented";
    case StatusCode::internal: return "internal";
    case StatusCode::unavailable: return "unavailable";
    case StatusCode::data_loss: return "data_loss";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  std::string text(status_code_name(code_));
  text += ": ";
  text += message_;
  return text;
}

Status Status::with_context(std::string_view context) const {
  if (ok()) return *this;
  std::string message(context);
  message += ": ";
  message += message_;
  return {code_, std::move(message)};
}

namespace detail {

void abort_on_value_of_error(const Status& status) noexcept {
  std::fprintf(stderr, "fleetcast: value() of a Result holding an error (a contract violation): %s\n",
               status.to_string().c_str());
  std::abort();
}

Status ok_status_without_value() {
  return internal_error("a Result was built from an OK Status, without a value (a bug in the caller)");
}

}  // namespace detail

}  // namespace fleetcast
