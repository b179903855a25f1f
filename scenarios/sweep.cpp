// Sweep files: read with the located JSON reader, check every parameter's pointer against the base
// scenario, expand the cartesian product, and validate each point as a scenario.
#include "scenarios/sweep.h"

#include <algorithm>
#include <limits>
#include <set>

#include "core/csv.h"
#include "core/json_text.h"
#include "scenarios/json_reader.h"
#include "scenarios/scenario_checks.h"

namespace fleetcast::scenarios {

using nlohmann::json;

namespace {

constexpr std::int64_t kMaxSeedCount = 1'000'000;

/// Every diagnostic, one a line, as an invalid_argument Status.
Status diagnostics_status(const std::vector<Diagnostic>& diagnostics) {
  std::string message;
  for (const auto& diagnostic : diagnostics) {
    if (!message.empty()) message += '\n';
    message += diagnostic.to_string();
  }
  return invalid_argument_error(std::move(message));
}

bool valid_parameter_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

/// Why `pointer` cannot be set in `document`, or "" when it can: it must name an existing value,
/// or a new member of an existing object.
std::string pointer_problem(const json& document, const json::json_pointer& pointer) {
  if (pointer.empty()) return "the pointer names the whole scenario; name a field in it";
  if (document.contains(pointer)) return "";
  const json::json_pointer parent = pointer.parent_pointer();
  if (!document.contains(parent)) {
    return "the base scenario has no '" + parent.to_string() + "' to hold '" + pointer.back() + "'";
  }
  if (!document.at(parent).is_object()) {
    return "'" + parent.to_string() + "' in the base scenario is " + describe_value(document.at(parent)) +
           ", which has no element '" + pointer.back() + "'";
  }
  return "";
}

/// One parameter from its object in "parameters"; nullopt after reporting its mistakes.
std::optional<SweepParameter> read_parameter(DiagnosticSink& sink, const json& value, const std::string& pointer,
                                             const json& base) {
  ObjectReader reader(sink, value, pointer, {"name", "path", "values"});
  const std::size_t before = sink.diagnostics().size();
  SweepParameter parameter;
  if (auto name = reader.string("name", Presence::required)) {
    parameter.name = *name;
    if (!valid_parameter_name(parameter.name)) {
      reader.error("name", "expected a name of letters, digits and '_' (it becomes a column name), found \"" +
                               parameter.name + "\"");
    }
  }
  if (auto path = reader.string("path", Presence::required)) {
    parameter.path = *path;
    try {
      const json::json_pointer json_pointer(parameter.path);
      if (json_pointer.to_string() == "/seed") {
        reader.error("path", "the seed is not a parameter; use \"seeds\": {\"first\": ..., \"count\": ...}");
      } else if (std::string problem = pointer_problem(base, json_pointer); !problem.empty()) {
        reader.error("path", "'" + parameter.path + "' cannot be set: " + problem);
      }
    } catch (const json::exception&) {
      reader.error("path", "expected a JSON pointer such as \"/policy/min_capacity\", found \"" + parameter.path + "\"");
    }
  }
  std::size_t position = 0;
  const bool is_array = reader.array("values", Presence::required, [&](const json& element, const std::string&) {
    // A value equal to an earlier one (50 and 50.0 compare equal, numbers by value) is the same
    // point; kept, its runs would hash apart (the texts differ) and run twice.
    if (std::find(parameter.values.begin(), parameter.values.end(), element) == parameter.values.end()) {
      parameter.values.push_back(element);
      parameter.positions.push_back(position);
    }
    ++position;
  });
  if (is_array && parameter.values.empty()) reader.error("values", "expected at least one value");
  reader.finish();
  if (sink.diagnostics().size() != before) return std::nullopt;
  return parameter;
}

/// The parameter list, checking names and paths are unique.
std::vector<SweepParameter> read_parameters(ObjectReader& root, DiagnosticSink& sink, const json& base) {
  std::vector<SweepParameter> parameters;
  root.array("parameters", Presence::optional, [&](const json& element, const std::string& pointer) {
    if (auto parameter = read_parameter(sink, element, pointer, base)) {
      for (const auto& earlier : parameters) {
        if (earlier.name == parameter->name) {
          sink.error(child_pointer(pointer, "name"), "duplicate parameter name '" + parameter->name + "'");
        }
        if (earlier.path == parameter->path) {
          sink.error(child_pointer(pointer, "path"),
                     "parameter '" + earlier.name + "' already sets '" + parameter->path + "'");
        } else if (const auto [outer, inner] = std::minmax(earlier.path, parameter->path,
                                                           [](const auto& a, const auto& b) { return a.size() < b.size(); });
                   inner.starts_with(outer + "/")) {
          // A value inside another parameter's value would be set in whatever that one holds.
          sink.error(child_pointer(pointer, "path"), "'" + parameter->path + "' overlaps parameter '" + earlier.name +
                                                         "' ('" + earlier.path + "'): '" + outer + "' holds '" +
                                                         inner + "'; expected parameters that set separate values");
        }
      }
      parameters.push_back(std::move(*parameter));
    }
  });
  return parameters;
}

std::optional<SeedRange> read_seeds(ObjectReader& root, DiagnosticSink& sink) {
  const json* value = root.field("seeds", Presence::optional);
  if (value == nullptr) return std::nullopt;
  ObjectReader seeds(sink, *value, child_pointer(root.pointer(), "seeds"), {"first", "count"});
  const auto first = seeds.integer("first", Presence::required, 0, std::numeric_limits<std::int64_t>::max());
  const auto count = seeds.integer("count", Presence::required, 1, kMaxSeedCount);
  if (!first || !count) return std::nullopt;
  if (*first > std::numeric_limits<std::int64_t>::max() - (*count - 1)) {
    seeds.error("count", "the last seed, first + count - 1, must fit in a 64-bit signed integer");
    return std::nullopt;
  }
  return SeedRange{static_cast<std::uint64_t>(*first), static_cast<std::uint64_t>(*count)};
}

std::string parameter_set_text(const std::vector<std::pair<std::string, json>>& parameters) {
  std::string text;
  for (const auto& [name, value] : parameters) text += (text.empty() ? "" : ", ") + name + " = " + json_text::dump(value);
  return text;
}

/// Validates one point; reports each of its scenario diagnostics once, at the value responsible
/// when a parameter's path leads to it (or the sweep has one parameter), else at "/parameters"
/// with the whole parameter set.
std::optional<Scenario> validate_point(const json& document, const std::vector<std::pair<std::string, json>>& point,
                                       const std::vector<SweepParameter>& parameters,
                                       const std::vector<std::size_t>& value_index, const std::filesystem::path& base,
                                       ScenarioFiles& files, DiagnosticSink& sink, std::set<std::string>& reported) {
  ScenarioValidation validation = validate_scenario_with_files(json_text::dump(document), base, nullptr, files);
  if (validation.valid()) return std::move(*validation.scenario);
  for (const auto& diagnostic : validation.diagnostics) {
    std::string location = "/parameters";
    std::string context = "the parameter set " + parameter_set_text(point);
    for (std::size_t p = 0; p < parameters.size(); ++p) {
      // The value is responsible when the problem lies in it or in what holds it, or when it is
      // the only thing the sweep changes.
      const std::string& path = parameters[p].path;
      const std::string& at = diagnostic.location;
      if (parameters.size() == 1 || at == path || at.starts_with(path + "/") || path.starts_with(at + "/")) {
        location = child_pointer(child_pointer(child_pointer("/parameters", p), "values"), parameters[p].positions[value_index[p]]);
        context = parameters[p].name + " = " + point[p].second.dump();
        break;
      }
    }
    const std::string message = "with " + context + " the scenario is invalid: " + diagnostic.to_string();
    if (reported.insert(location + message).second) sink.error(location, message);
  }
  return std::nullopt;
}

/// The cartesian product of a checked sweep's values, each point validated as a scenario.
Result<Sweep> expand_points(Sweep sweep, const json& base_document, std::uint64_t points, DiagnosticSink& sink) {
  // The cartesian product as an odometer, the last parameter turning fastest.
  std::vector<std::size_t> value_index(sweep.parameters.size(), 0);
  std::set<std::string> reported;
  ScenarioFiles files;  // the points name the same CSVs: each is read once
  for (std::uint64_t p = 0; p < points; ++p) {
    ExpandedScenario point;
    point.source = sweep.file;
    point.document = base_document;
    for (std::size_t i = 0; i < sweep.parameters.size(); ++i) {
      const SweepParameter& parameter = sweep.parameters[i];
      point.parameters.emplace_back(parameter.name, parameter.values[value_index[i]]);
      point.document[json::json_pointer(parameter.path)] = parameter.values[value_index[i]];
    }
    if (sweep.seeds) point.document["seed"] = sweep.seeds->first;
    if (auto scenario = validate_point(point.document, point.parameters, sweep.parameters, value_index, sweep.base,
                                       files, sink, reported)) {
      point.scenario = std::move(*scenario);
      sweep.points.push_back(std::move(point));
    }
    for (std::size_t i = sweep.parameters.size(); i-- > 0;) {
      if (++value_index[i] < sweep.parameters[i].values.size()) break;
      value_index[i] = 0;
    }
  }
  if (!sink.empty()) return diagnostics_status(sink.diagnostics());
  return sweep;
}

/// read_sweep_json without its guard against nlohmann's exceptions.
Result<Sweep> read_sweep_unguarded(std::string_view text, const std::filesystem::path& file) {
  DiagnosticSink sink(file.string());
  const std::optional<json> document = parse_json_document(text, sink);
  if (!document) return diagnostics_status(sink.diagnostics());

  Sweep sweep;
  sweep.file = file;
  ObjectReader root(sink, *document, "", {"$schema", "format_version", "base", "parameters", "seeds"});
  if (!root.is_object()) return diagnostics_status(sink.diagnostics());
  root.field("$schema", Presence::optional);  // editors' hint, not used
  if (auto version = root.integer("format_version", Presence::required, 1, std::numeric_limits<std::int64_t>::max());
      version && *version > kSweepFormatVersion) {
    root.error("format_version", "sweep format version " + std::to_string(*version) +
                                     " is newer than this fleetcast reads (" + std::to_string(kSweepFormatVersion) +
                                     "); use a newer fleetcast");
  }
  json base_document;
  if (auto base = root.string("base", Presence::required)) {
    sweep.base = file.parent_path() / *base;
    if (auto base_text = csv::read_text_file(sweep.base); !base_text.ok()) {
      root.error("base", "cannot read the base scenario: " + base_text.status().message());
    } else {
      DiagnosticSink base_sink(sweep.base.string());
      if (auto parsed = parse_json_document(*base_text, base_sink); parsed && parsed->is_object()) {
        base_document = std::move(*parsed);
      } else {
        root.error("base", "the base scenario " + sweep.base.string() + " is not a JSON object" +
                               (base_sink.empty() ? "" : ": " + base_sink.diagnostics().front().to_string()));
      }
    }
  }
  if (base_document.is_object()) sweep.parameters = read_parameters(root, sink, base_document);
  sweep.seeds = read_seeds(root, sink);
  root.finish();
  if (!sink.empty()) return diagnostics_status(sink.diagnostics());

  // The number of points and runs, checked before anything is expanded.
  std::uint64_t points = 1;
  for (const auto& parameter : sweep.parameters) {
    points *= parameter.values.size();
    if (points > kMaxSweepPoints) {
      return invalid_argument_error(file.string() + ": /parameters: the sweep has more than " +
                                    std::to_string(kMaxSweepPoints) +
                                    " points (combinations of parameter values); split it");
    }
  }
  const std::uint64_t seeds = sweep.seeds ? sweep.seeds->count : 1;
  if (points * seeds > kMaxSweepRuns) {
    return invalid_argument_error(file.string() + ": /parameters: the sweep expands to more than " +
                                  std::to_string(kMaxSweepRuns) + " runs; split it");
  }
  return expand_points(std::move(sweep), base_document, points, sink);
}


}  // namespace

Result<Sweep> read_sweep_json(std::string_view text, const std::filesystem::path& file) {
  try {
    return read_sweep_unguarded(text, file);
  } catch (const json::exception& error) {
    // The readers check types before they read; this stops what they did not foresee at the edge.
    return invalid_argument_error(file.string() + ": " + json_text::describe_exception(error) +
                                  "; expected a sweep as the documentation describes");
  }
}

Result<Sweep> read_sweep_file(const std::filesystem::path& file) {
  auto text = csv::read_text_file(file);
  if (!text.ok()) return text.status();
  return read_sweep_json(*text, file);
}

Result<ExpandedScenario> read_scenario_for_batch(const std::filesystem::path& file) {
  auto text = csv::read_text_file(file);
  if (!text.ok()) return text.status();
  ScenarioValidation validation = validate_scenario_json(*text, file);
  if (!validation.valid()) return diagnostics_status(validation.diagnostics);
  ExpandedScenario expanded;
  expanded.source = file;
  expanded.document = json::parse(*text);  // valid: the validation parsed it
  expanded.scenario = std::move(*validation.scenario);
  return expanded;
}

std::string canonical_scenario_text(const json& document, std::uint64_t seed) {
  json copy = document;
  copy["seed"] = seed;
  return json_text::dump(copy);
}

}  // namespace fleetcast::scenarios
