// Naming the formats, and writing an export all or nothing.
#include <algorithm>
#include <cctype>
#include <set>
#include <system_error>

#include <unistd.h>

#include "export/exporters.h"
#include "fleetcast/export.h"

namespace fleetcast::exporters {

namespace {

namespace fs = std::filesystem;

// Writes each file (and its folders) under `folder`, then syncs the folders deepest first, so that
// what the rename publishes is complete and durable.
Status write_files(FileSystem& disk, const std::vector<ExportFile>& files, const fs::path& folder) {
  std::set<fs::path> folders{folder};
  for (const ExportFile& file : files) {
    const fs::path path = folder / file.path;
    if (Status status = disk.create_folders(path.parent_path()); !status.ok()) return status;
    for (fs::path sub = file.path.parent_path(); !sub.empty(); sub = sub.parent_path()) folders.insert(folder / sub);
    if (Status status = disk.write_whole_file(path, file.contents); !status.ok()) return status;
  }
  for (auto deepest = folders.rbegin(); deepest != folders.rend(); ++deepest) {
    if (Status status = disk.sync_folder(*deepest); !status.ok()) return status;
  }
  return {};
}

}  // namespace

Status check_inside_folder(const std::vector<ExportFile>& files) {
  for (const ExportFile& file : files) {
    const fs::path normal = file.path.lexically_normal();
    if (file.path.empty() || file.path.has_root_path() || normal == "." || *normal.begin() == "..") {
      return invalid_argument_error("export file '" + file.path.string() +
                                    "' would lie outside the export folder (--out); expected the plan's group names and regions to "
                                    "make paths inside it (no leading '/', no '..' reaching above it)");
    }
  }
  return {};
}

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

Result<std::vector<ExportFile>::iterator> readme_file(std::vector<ExportFile>& files) {
  const auto readme = std::find_if(files.begin(), files.end(), [](const ExportFile& file) { return file.path == "README.txt"; });
  if (readme == files.end()) return internal_error("the export has no README.txt to add its sections to");
  return readme;
}

std::string readme_heading(const Plan& plan, std::string_view what) {
  return std::string(what) + " exported by fleetcast from the plan of scenario '" + plan.scenario + "' (" +
         plan_hash(plan) + ")";
}

std::string shell_word(std::string_view text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || std::string_view("_-./:=@%+,").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(text);
  std::string word = "'";
  for (const char c : text) word += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return word + "'";
}

Status write_export(const std::vector<ExportFile>& files, const fs::path& out, FileSystem* file_system) {
  if (Status status = check_inside_folder(files); !status.ok()) return status;
  PosixFileSystem posix;
  FileSystem& disk = file_system != nullptr ? *file_system : posix;
  std::error_code error;
  const fs::file_status status = fs::status(out, error);
  if (fs::exists(status) && (!fs::is_directory(status) || !fs::is_empty(out, error))) {
    return failed_precondition_error(out.string() + ": exists and is not an empty folder; remove it or choose another --out");
  }
  // "out/", "out/." and "./out" name the folder "out": the temporary folder goes beside it, and
  // the rename targets the folder itself, not a path rename(2) refuses (a trailing "/.").
  fs::path absolute = fs::absolute(out, error).lexically_normal();
  if (!absolute.has_filename() && absolute != absolute.root_path()) absolute = absolute.parent_path();
  const fs::path temporary =
      absolute.parent_path() / ("." + absolute.filename().string() + ".tmp." + std::to_string(::getpid()));
  (void)disk.remove_all(temporary);
  Status written = write_files(disk, files, temporary);
  // rename(2) replaces an empty folder in one step, so `out` is never missing half-way.
  if (written.ok()) written = disk.rename(temporary, absolute);
  if (!written.ok()) {
    (void)disk.remove_all(temporary);
    return written.with_context(out.string() + ": nothing exported");
  }
  Status synced = disk.sync_folder(absolute.parent_path());
  return synced.ok() ? synced : synced.with_context(out.string() + ": exported whole, but not yet durable");
}

}  // namespace fleetcast::exporters
