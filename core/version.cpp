#include "fleetcast/version.h"

namespace fleetcast {

const char* library_version() noexcept { return FLEETCAST_VERSION_STRING; }

}  // namespace fleetcast
