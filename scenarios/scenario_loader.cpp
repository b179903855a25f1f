// The public entry points of the scenario format: read the file, parse JSON (syntax errors with
// line and column), parse the document, then check it against itself and the price catalog.
#include <memory>

#include <nlohmann/json.hpp>

#include "core/csv.h"
#include "core/hash.h"
#include "core/json_text.h"
#include "fleetcast/scenario.h"
#include "scenarios/json_reader.h"
#include "scenarios/scenario_checks.h"
#include "scenarios/scenario_parser.h"

namespace fleetcast {

Result<std::unique_ptr<PriceSource>> open_scenario_prices(const PricingSettings& pricing) {
  if (!pricing.database) return make_builtin_price_source();
  PriceDatabase::Options options;
  options.mode = PriceDatabase::Mode::read_only;
  auto database = PriceDatabase::open(*pricing.database, options);
  if (!database.ok()) return database.status();
  return std::unique_ptr<PriceSource>(std::move(*database));
}

ScenarioValidation scenarios::validate_scenario_with_files(std::string_view json_text, const std::filesystem::path& file,
                                                           const PriceSource* catalog, ScenarioFiles& files,
                                                           const FileRoot* root) {
  ScenarioValidation validation;
  scenarios::DiagnosticSink sink(file.string());
  const std::filesystem::path base_dir = root == nullptr ? file.parent_path() : root->directory.value_or("");
  const std::optional<nlohmann::json> document = scenarios::parse_json_document(json_text, sink);
  if (!document) {
    validation.diagnostics = std::move(sink.diagnostics());
    return validation;
  }
  Scenario scenario;
  try {
    scenario = scenarios::parse_scenario(*document, base_dir, sink);
  } catch (const nlohmann::json::exception& error) {
    // The readers check every type before they read; this stops what they did not foresee here,
    // at the edge of the module, rather than across the public API.
    sink.error("", json_text::describe_exception(error) + "; expected a scenario as scenario.schema.json describes");
  }
  if (sink.empty() && root != nullptr) scenarios::check_file_root(scenario, *root, sink);
  if (sink.empty()) {
    if (catalog == nullptr) {
      const auto& opened = files.prices(scenario.pricing);
      if (opened.ok()) {
        catalog = opened->get();
      } else {
        sink.error(scenario.pricing.database ? "/pricing/database" : "/pricing", opened.status().message());
      }
    }
    if (catalog != nullptr) {
      scenarios::check_scenario(scenario, scenarios::commitment_pointers(*document), *catalog, files, sink);
    }
  }
  if (sink.empty()) {
    scenario.source_file = file;
    scenario.source_hash = fnv1a64_label(Fnv1a64().add(json_text).value());
    validation.scenario = std::move(scenario);
  }
  validation.diagnostics = std::move(sink.diagnostics());
  return validation;
}

ScenarioValidation validate_scenario_json(std::string_view json_text, const std::filesystem::path& file,
                                          const PriceSource* catalog) {
  scenarios::ScenarioFiles files;
  return scenarios::validate_scenario_with_files(json_text, file, catalog, files);
}

ScenarioValidation validate_scenario_json_under(std::string_view json_text, std::string_view source, const FileRoot& root,
                                                const PriceSource* catalog) {
  scenarios::ScenarioFiles files;
  return scenarios::validate_scenario_with_files(json_text, std::filesystem::path(source), catalog, files, &root);
}

ScenarioValidation validate_scenario_file(const std::filesystem::path& file, const PriceSource* catalog) {
  auto text = csv::read_text_file(file);
  if (!text.ok()) {
    ScenarioValidation validation;
    // The reader's message already starts with the path.
    validation.diagnostics.push_back(Diagnostic{"", "", text.status().message()});
    return validation;
  }
  return validate_scenario_json(*text, file, catalog);
}

namespace {

// The validation as a Result: invalid_argument with every diagnostic, one a line.
Result<Scenario> as_result(ScenarioValidation validation) {
  if (validation.valid()) return std::move(*validation.scenario);
  std::string message;
  for (const auto& diagnostic : validation.diagnostics) {
    if (!message.empty()) message += '\n';
    message += diagnostic.to_string();
  }
  return invalid_argument_error(std::move(message));
}

}  // namespace

Result<Scenario> load_scenario(const std::filesystem::path& file, const PriceSource* catalog) {
  return as_result(validate_scenario_file(file, catalog));
}

Result<Scenario> load_scenario_json_under(std::string_view json_text, std::string_view source, const FileRoot& root,
                                          const PriceSource* catalog) {
  return as_result(validate_scenario_json_under(json_text, source, root, catalog));
}

bool meets(const InstanceType& type, const GpuRequirement& gpu) {
  if (type.gpu_count < gpu.min_gpus_per_instance) return false;
  if (!gpu.gpu_models.empty() && std::find(gpu.gpu_models.begin(), gpu.gpu_models.end(), type.gpu_model) == gpu.gpu_models.end()) {
    return false;
  }
  const double memory_per_gpu = type.gpu_count > 0 ? type.gpu_memory_gib / type.gpu_count : 0;
  return memory_per_gpu + 1e-9 >= gpu.min_gpu_memory_gib;
}

std::vector<ScenarioFile> scenario_files(const Scenario& scenario) {
  std::vector<ScenarioFile> files;
  if (!scenario.source_file.empty()) files.push_back({"the scenario", scenario.source_file});
  if (scenario.pricing.database) files.push_back({"the scenario's price database", *scenario.pricing.database});
  for (const Workload& workload : scenario.workloads) {
    const auto* service = std::get_if<ServiceWorkload>(&workload.spec);
    const auto* trace = service != nullptr ? std::get_if<DemandTrace>(&service->demand.source) : nullptr;
    if (trace != nullptr) files.push_back({"the demand trace of workload '" + workload.name + "'", trace->file});
  }
  if (!scenario.spot.interruption_trace.empty()) {
    files.push_back({"the scenario's spot availability trace", scenario.spot.interruption_trace});
  }
  return files;
}

}  // namespace fleetcast
