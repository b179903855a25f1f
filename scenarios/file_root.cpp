// Confining the files a scenario received as text may name to one directory (FileRoot): a server
// that plans request bodies must not let "../../etc/passwd", an absolute path or a symlink placed
// under the root read anything outside it. Paths are compared in canonical form (weakly_canonical:
// symlinks of the existing part followed, "." and ".." removed), component by component, so
// "/data-other" is not taken to be inside "/data".
#include <algorithm>
#include <system_error>
#include <utility>
#include <vector>

#include "scenarios/scenario_checks.h"

namespace fleetcast::scenarios {

namespace {

bool is_inside(const std::filesystem::path& canonical_root, const std::filesystem::path& path) {
  std::error_code error;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, error);
  if (error) return false;
  auto [root_end, path_end] = std::mismatch(canonical_root.begin(), canonical_root.end(), canonical.begin(), canonical.end());
  return root_end == canonical_root.end();
}

// The path relative to the root ("../outside.csv"), as a scenario under it would write it: a
// message to a client must not spell out where the root lies on the server.
std::string shown(const std::filesystem::path& path, const FileRoot& root) {
  if (!root.directory || path.is_absolute() != root.directory->is_absolute()) return path.string();
  const std::filesystem::path relative = path.lexically_relative(*root.directory);
  return relative.empty() ? path.string() : relative.string();
}

}  // namespace

void check_file_root(const Scenario& scenario, const FileRoot& root, DiagnosticSink& sink) {
  std::vector<std::pair<std::string, std::filesystem::path>> files;  // (JSON pointer, resolved path)
  if (scenario.pricing.database) files.emplace_back("/pricing/database", *scenario.pricing.database);
  for (std::size_t i = 0; i < scenario.workloads.size(); ++i) {
    const auto* service = std::get_if<ServiceWorkload>(&scenario.workloads[i].spec);
    const auto* trace = service == nullptr ? nullptr : std::get_if<DemandTrace>(&service->demand.source);
    if (trace != nullptr) files.emplace_back(child_pointer(child_pointer("/workloads", i), "demand") + "/csv", trace->file);
  }
  if (!scenario.spot.interruption_trace.empty()) files.emplace_back("/spot/interruption/trace", scenario.spot.interruption_trace);
  if (files.empty()) return;
  std::error_code error;
  const std::filesystem::path canonical_root =
      root.directory ? std::filesystem::canonical(*root.directory, error) : std::filesystem::path();
  for (const auto& [pointer, path] : files) {
    if (!root.directory) {
      sink.error(pointer, "refers to the file '" + path.string() + "', but no file may be read: " + root.name +
                              " is not set; expected a scenario without files");
    } else if (error) {
      sink.error(pointer, root.name + " '" + root.directory->string() + "' cannot be resolved: " + error.message());
    } else if (!is_inside(canonical_root, path)) {
      sink.error(pointer, "the path '" + shown(path, root) + "' leads outside " + root.name +
                              "; expected a file under it");
    }
  }
}

}  // namespace fleetcast::scenarios
