// Writing the CLI's output files so that a failure never leaves a half-written file behind: the
// text goes to a temporary file beside the target, which is renamed over it only when complete.
#pragma once

#include <filesystem>
#include <string_view>

#include "fleetcast/status.h"

namespace fleetcast::cli {

Status write_file_atomically(const std::filesystem::path& path, std::string_view contents);

}  // namespace fleetcast::cli
