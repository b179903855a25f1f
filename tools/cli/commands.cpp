#include "tools/cli/commands.h"

namespace fleetcast::cli {

int exit_code_for(const Status& status) {
  switch (status.code()) {
    case StatusCode::invalid_argument:
    case StatusCode::not_found:
    case StatusCode::failed_precondition:
    case StatusCode::out_of_range:
      return kExitInvalidInput;
    default:
      return kExitFailure;
  }
}

}  // namespace fleetcast::cli
