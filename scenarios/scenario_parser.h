// Parsing of a scenario document (format version 1) into a Scenario, checking every field's type,
// range and the rules that concern one object at a time. Checks across objects and against the
// price catalog are in scenario_checks.h.
//
// Thread-safety: pure functions.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fleetcast/scenario.h"
#include "scenarios/json_reader.h"

namespace fleetcast::scenarios {

/// Reads `document` into a Scenario; relative paths are resolved against `base_dir`. Reports every
/// problem to `sink`; the returned scenario is meaningful only when the sink stays empty.
Scenario parse_scenario(const nlohmann::json& document, const std::filesystem::path& base_dir,
                        DiagnosticSink& sink);

/// One "commitments" entry is a Savings Plan when its "type" is "compute" or "ec2_instance", a
/// reservation otherwise ("type" absent or "reserved").
bool is_savings_plan_entry(const nlohmann::json& entry);

/// The JSON pointers of the document's commitment entries, split as parse_scenario splits them
/// into Scenario::commitments and Scenario::savings_plans (same order), for later diagnostics.
struct CommitmentPointers {
  std::vector<std::string> reservations;
  std::vector<std::string> savings_plans;
};
CommitmentPointers commitment_pointers(const nlohmann::json& document);

/// What makes a horizon unusable, and the field of "horizon" it is about.
struct HorizonProblem {
  std::string field;    // "start", "duration" or "step"
  std::string message;
};
/// The first rule `horizon` breaks (check_horizon's, fleetcast/scenario.h), if any.
std::optional<HorizonProblem> horizon_problem(const Horizon& horizon);

/// Readers of the parts other documents share with a scenario (a plan has a horizon, and groups
/// with a distribution and target tracking). Each reports its problems to `sink`.
/// The "horizon" field of `parent`: start, duration, step; the step divides the duration.
Horizon parse_horizon(ObjectReader& parent, DiagnosticSink& sink);
/// The optional "distribution" field of `parent` (AWS's InstancesDistribution); defaults when absent.
InstancesDistribution parse_distribution(ObjectReader& parent, DiagnosticSink& sink);
/// A Savings Plan object at `pointer` (a scenario's owned plan, a plan's recommended one): type,
/// family and region (EC2 Instance plans only), hourly_commitment_usd (at most three decimals),
/// term, payment, start.
SavingsPlan parse_savings_plan(const nlohmann::json& value, const std::string& pointer, DiagnosticSink& sink);
/// A target-tracking object at `pointer`; `target_presence` says whether it must state its
/// target_value (a predictive policy's need not: its plan tracks each service's own target).
TargetTracking parse_target_tracking(const nlohmann::json& value, const std::string& pointer, DiagnosticSink& sink,
                                     Presence target_presence = Presence::required);

}  // namespace fleetcast::scenarios
