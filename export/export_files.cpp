// Naming the formats, and writing an export all or nothing.
#include <fstream>
#include <system_error>

#include <unistd.h>

#include "fleetcast/export.h"

namespace fleetcast::exporters {

namespace {

namespace fs = std::filesystem;

Status write_files(const std::vector<ExportFile>& files, const fs::path& folder) {
  for (const ExportFile& file : files) {
    const fs::path path = folder / file.path;
    std::error_code error;
    fs::create_directories(path.parent_path(), error);
    if (error) return permission_denied_error(path.parent_path().string() + ": cannot create the folder: " + error.message());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return permission_denied_error(path.string() + ": cannot create the file");
    out.write(file.contents.data(), static_cast<std::streamsize>(file.contents.size()));
    out.flush();
    if (!out) return data_loss_error(path.string() + ": write failed (disk full?)");
  }
  return {};
}

}  // namespace

std::optional<ExportFormat> parse_export_format(std::string_view name) {
  for (const ExportFormat format : {ExportFormat::aws, ExportFormat::cloudformation, ExportFormat::kubernetes}) {
    if (name == export_format_name(format)) return format;
  }
  return std::nullopt;
}

std::string_view export_format_name(ExportFormat format) {
  switch (format) {
    case ExportFormat::aws:
      return "aws";
    case ExportFormat::cloudformation:
      return "cloudformation";
    case ExportFormat::kubernetes:
      return "kubernetes";
  }
  return "unknown";
}

std::string readme_heading(const Plan& plan, std::string_view what) {
  return std::string(what) + " exported by fleetcast from the plan of scenario '" + plan.scenario + "' (" +
         plan_hash(plan) + ")";
}

Status write_export(const std::vector<ExportFile>& files, const fs::path& out) {
  std::error_code error;
  const fs::file_status status = fs::status(out, error);
  const bool exists = fs::exists(status);
  if (exists && (!fs::is_directory(status) || !fs::is_empty(out, error))) {
    return failed_precondition_error(out.string() + ": exists and is not an empty folder; remove it or choose another --out");
  }
  const fs::path absolute = fs::absolute(out, error);
  const fs::path temporary =
      absolute.parent_path() / ("." + absolute.filename().string() + ".tmp." + std::to_string(::getpid()));
  fs::remove_all(temporary, error);
  Status written = write_files(files, temporary);
  if (written.ok()) {
    if (exists) fs::remove(out, error);  // the empty folder the export replaces
    fs::rename(temporary, out, error);
    if (error) written = permission_denied_error(out.string() + ": cannot move the export into place: " + error.message());
  }
  if (!written.ok()) fs::remove_all(temporary, error);
  return written;
}

}  // namespace fleetcast::exporters
