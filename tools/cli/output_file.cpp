#include "tools/cli/output_file.h"

#include <fstream>
#include <system_error>

#include <unistd.h>

namespace fleetcast::cli {

Status write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  const std::filesystem::path temporary = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return permission_denied_error(path.string() + ": cannot create the file (is the folder there and writable?)");
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      return data_loss_error(path.string() + ": write failed (disk full?)");
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    return permission_denied_error(path.string() + ": cannot replace the file: " + error.message());
  }
  return {};
}

}  // namespace fleetcast::cli
