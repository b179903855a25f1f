#include "fleetcast/batch.h"

#include <unordered_set>

#include "core/json_text.h"
#include "core/hash.h"
#include "scenarios/sweep.h"

namespace fleetcast::batch {

namespace {

/// Adds a point and its runs (one per seed) to the plan, sharing the price source of an earlier
/// point with the same pricing settings.
Status add_point(BatchPlan& plan, std::unordered_set<std::string>& hashes, scenarios::ExpandedScenario expanded,
                 const std::vector<std::uint64_t>& seeds) {
  BatchPoint point;
  point.source = expanded.source.string();
  for (const auto& [name, value] : expanded.parameters) point.parameters.emplace_back(name, json_text::dump(value));
  for (const auto& earlier : plan.points) {
    if (earlier.scenario.pricing == expanded.scenario.pricing) point.prices = earlier.prices;
  }
  if (!point.prices) {
    auto prices = open_scenario_prices(expanded.scenario.pricing);
    if (!prices.ok()) return prices.status().with_context(point.source);
    point.prices = std::move(*prices);
  }
  const std::size_t index = plan.points.size();
  const std::size_t runs_before = plan.runs.size();
  for (const std::uint64_t seed : seeds) {
    std::string hash = run_hash(scenarios::canonical_scenario_text(expanded.document, seed), seed);
    if (!hashes.insert(hash).second) {
      ++plan.duplicates;
      continue;
    }
    plan.runs.push_back(BatchRun{std::move(hash), index, seed});
  }
  // A point every run of which an earlier point has (a file given twice, a value repeated in a
  // sweep) is that point: kept, it would be a second summary row with no runs.
  if (plan.runs.size() == runs_before && !seeds.empty()) return {};
  point.scenario = std::move(expanded.scenario);
  plan.points.push_back(std::move(point));
  return {};
}

void compute_digest(BatchPlan& plan) {
  Fnv1a64 digest;
  for (const auto& run : plan.runs) digest.add(run.run_hash);
  plan.digest = digest.value();
}

}  // namespace

std::string run_hash(const std::string& canonical_scenario_text, std::uint64_t seed) {
  return hash_hex(Fnv1a64().add(canonical_scenario_text).add("\n").add(std::to_string(seed)).value());
}

Result<BatchPlan> plan_sweep(const std::filesystem::path& sweep_file) {
  auto sweep = scenarios::read_sweep_file(sweep_file);
  if (!sweep.ok()) return sweep.status();
  BatchPlan plan;
  std::unordered_set<std::string> hashes;
  for (auto& expanded : sweep->points) {
    std::vector<std::uint64_t> seeds;
    if (sweep->seeds) {
      for (std::uint64_t s = 0; s < sweep->seeds->count; ++s) seeds.push_back(sweep->seeds->first + s);
    } else {
      seeds.push_back(expanded.scenario.seed);
    }
    if (Status status = add_point(plan, hashes, std::move(expanded), seeds); !status.ok()) return status;
  }
  compute_digest(plan);
  return plan;
}

Result<BatchPlan> plan_files(std::span<const std::filesystem::path> files) {
  BatchPlan plan;
  std::unordered_set<std::string> hashes;
  std::string problems;
  for (const auto& file : files) {
    auto expanded = scenarios::read_scenario_for_batch(file);
    Status status = expanded.ok() ? Status{} : expanded.status();
    if (expanded.ok()) {
      const std::uint64_t seed = expanded->scenario.seed;
      status = add_point(plan, hashes, std::move(*expanded), {seed});
    }
    if (!status.ok()) problems += (problems.empty() ? "" : "\n") + status.message();
  }
  if (!problems.empty()) return invalid_argument_error(std::move(problems));
  compute_digest(plan);
  return plan;
}

RunRecord make_record(const BatchPlan& plan, const BatchRun& run, RunOutcome outcome) {
  const BatchPoint& point = plan.points[run.point];
  return RunRecord{run.run_hash, point.scenario.name, point.source, point.parameters, run.seed, std::move(outcome)};
}

}  // namespace fleetcast::batch
