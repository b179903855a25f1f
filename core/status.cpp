#include "fleetcast/status.h"

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

}  // namespace fleetcast
