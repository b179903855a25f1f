// What is exported is what was simulated: every shipped example, and a 30-day plan that follows a
// real load series hour by hour (../shared/data/load), planned, exported in every format within
// the targets' limits, and the exported schedule simulated beside the plan against the same
// demand and seed, both launching ahead of rises by the plan's lead. A Kubernetes export holds the
// plan's mix (a Deployment per capacity type): it must serve at least what the plan serves and
// cost no more than the plan plus the extra the export reports (plus, where stated, a share of the
// plan's cost for the draws its extra launches shift). An Auto Scaling group splits its capacity
// by its InstancesDistribution instead, and the exported plan runs that split: its capacity moved
// to spot may serve less, by at most that capacity's share, and what the split adds costs at
// most the reported split cost.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>

#include "fleetcast/export.h"
#include "fleetcast/scenario.h"
#include "tests/engine/test_catalog.h"

using namespace fleetcast;
using namespace fleetcast::exporters;
namespace fs = std::filesystem;

namespace {

// Exports `plan` in every format and checks the re-simulation and the limits. `draw_shift_share`:
// the share of the plan's simulated cost the export may cost beyond plan + extra.
void check_exports(const Scenario& scenario, const PriceSource& prices, const Plan& plan, PlanDemand demand,
                   double draw_shift_share = 0) {
  for (const ExportFormat format : {ExportFormat::aws, ExportFormat::cloudformation, ExportFormat::kubernetes}) {
    INFO(scenario.name << " as " << export_format_name(format));
    auto rendered = render_export(plan, format);
    INFO((rendered.ok() ? std::string() : rendered.status().message()));
    REQUIRE(rendered.ok());
    // The export launches ahead of rises as the plan does: the exported plan runs with the part
    // of the lead its actions fire ahead (the hourly plans here lead by minutes: all of it).
    for (std::size_t g = 0; g < plan.groups.size(); ++g) {
      CHECK(rendered->exported.groups[g].launch_lead == lead_shift(plan.groups[g].launch_lead, plan.horizon.step).ahead);
      if (plan.horizon.step == kHour) CHECK(rendered->exported.groups[g].launch_lead == plan.groups[g].launch_lead);
    }
    Money extra;
    double moved_to_spot = 0, exported_gpu_hours = 0;
    for (const GroupExportSummary& group : rendered->groups) {
      CHECK(group.actions <= kDefaultMaxActionsPerGroup);
      extra += group.extra_cost + group.split_cost;
      moved_to_spot += group.gpu_hours_moved_to_spot;
      if (format == ExportFormat::kubernetes) CHECK(group.gpu_hours_moved_to_spot + group.gpu_hours_moved_to_on_demand == 0);
    }
    for (const PlannedGroup& group : rendered->exported.groups) {
      for (const int gpus : planned_group_gpus(rendered->exported, group)) {
        exported_gpu_hours += gpus * static_cast<double>(plan.horizon.step.count()) / 3600.0;
      }
    }
    SimulationOptions options;
    options.replicas = 4;
    auto verified = verify_export(scenario, prices, plan, *rendered, options, demand);
    INFO((verified.ok() ? std::string() : verified.status().message()));
    REQUIRE(verified.ok());
    INFO("plan $" << verified->plan.cost_usd.mean << " served " << verified->plan.served_fraction.mean << "; export $"
                  << verified->exported.cost_usd.mean << " served " << verified->exported.served_fraction.mean
                  << "; reported extra and split $" << extra.usd() << "; GPU-hours moved to spot " << moved_to_spot);
    CHECK(verified->exported.served_fraction.mean >=
          verified->plan.served_fraction.mean - moved_to_spot / std::max(1.0, exported_gpu_hours) - 1e-12);
    CHECK(verified->exported.cost_usd.mean <=
          verified->plan.cost_usd.mean * (1 + draw_shift_share) + extra.usd() + 1e-6);
  }
}

// An example scenario, its prices and its plan (no risk simulation).
struct PlannedExample {
  Scenario scenario;
  std::unique_ptr<PriceSource> prices;
  Plan plan;
};

PlannedExample plan_example(const fs::path& file) {
  auto scenario = load_scenario(file);
  REQUIRE(scenario.ok());
  auto prices = open_scenario_prices(scenario->pricing);
  REQUIRE(prices.ok());
  PlanOptions options;
  options.replicas = 0;
  auto plan = make_plan(*scenario, **prices, options);
  INFO(file << ": " << (plan.ok() ? std::string() : plan.status().message()));
  REQUIRE(plan.ok());
  return {std::move(*scenario), std::move(*prices), std::move(*plan)};
}

}  // namespace

TEST_CASE("every example's export serves what its plan serves for at most the reported extra", "[export][simulation]") {
  for (const auto& entry : fs::directory_iterator(FLEETCAST_SOURCE_DIR "/scenarios/examples")) {
    if (entry.path().extension() != ".json") continue;
    const PlannedExample example = plan_example(entry.path());
    // training_deadlines_on_spot's spot pools replay an availability trace, which refuses much of
    // the capacity its AWS split moves to spot (its base of 56 GPUs and 0% above put spot where the
    // plan runs all on demand because the trace has none): each refusal is covered on demand, and
    // the cover stays until the group scales in, after spot returns (engine/group_reconciliation.cpp,
    // reconcile), which no price of the split's own instances bounds; with the draws and the batch
    // queue that shifts, 1.7% of the plan's cost beyond the reported extra and split over 8
    // replicas; 3% allowed.
    const double draw_shift_share = entry.path().stem() == "training_deadlines_on_spot" ? 0.03 : 0;
    check_exports(example.scenario, *example.prices, example.plan, PlanDemand::forecast, draw_shift_share);
  }
}

TEST_CASE("a Kubernetes export holds a spot rise a step early in the pools the plan launches it in", "[export][simulation]") {
  // 10-minute steps and an 11-minute launch lead: every rise is held one whole interval early.
  // Where the trace's spot capacity drops for an interval, the plan's spot falls to zero there
  // and rises again after: the spot Deployment holds that rise, 1 g6e.12xlarge and 1 p4d.24xlarge,
  // through the dip, as the plan launching 11 minutes ahead does, not 3 of the cheapest per GPU.
  const PlannedExample example = plan_example(FLEETCAST_SOURCE_DIR "/scenarios/examples/training_deadlines_on_spot.json");
  const Plan& plan = example.plan;
  REQUIRE(plan.horizon.step == Seconds{600});
  REQUIRE(lead_shift(plan.groups.at(0).launch_lead, plan.horizon.step).intervals == 1);
  auto rendered = render_export(plan, ExportFormat::kubernetes);
  REQUIRE(rendered.ok());
  const PlannedGroup& planned = plan.groups.at(0);
  const PlannedGroup& exported = rendered->exported.groups.at(0);
  std::vector<std::size_t> spot;  // the group's spot pools
  for (std::size_t i = 0; i < planned.pools.size(); ++i) {
    if (plan.pools[planned.pools[i]].option == PurchaseOption::spot) spot.push_back(i);
  }
  REQUIRE(spot.size() == 2);
  std::size_t rises = 0;
  for (std::size_t k = 0; k + 1 < planned.instances.at(0).size(); ++k) {
    // A rise of the spot part where no spot pool falls: k+1's spot instances, held at k.
    const auto grows = [&](std::size_t i) { return planned.instances[i][k + 1] >= planned.instances[i][k]; };
    const auto rises_in = [&](std::size_t i) { return planned.instances[i][k + 1] > planned.instances[i][k]; };
    if (!std::all_of(spot.begin(), spot.end(), grows) || !std::any_of(spot.begin(), spot.end(), rises_in)) continue;
    ++rises;
    for (const std::size_t i : spot) {
      INFO("interval " << k << ", pool " << plan.pools[planned.pools[i]].name);
      CHECK(exported.instances[i][k] >= planned.instances[i][k + 1]);
    }
  }
  CHECK(rises > 10);
}

TEST_CASE("a 30-day plan of a real load series exports within the limits and serves the real load as planned",
          "[export][simulation][real-data]") {
  const std::string series = FLEETCAST_SHARED_DATA_DIR "/load/alibaba_gpu2023_gpus_allocated_1h.csv";
  INFO("needs the shared data beside the repository: " << series);
  REQUIRE(fs::exists(series));
  // The horizon starts where the series does: with no history before it the planner follows the
  // trace itself, so the plan changes nearly every hour without a daily pattern — the hardest
  // schedule to fit in 100 actions. Its commitments are judged with the horizon repeated over the
  // term (a flat, certain outlook): with the default outlook the export's extra spot launches in
  // one region shift the random draws of the other region's group (streams shared by pools), which
  // costs 0.24% beyond the reported extra (ARCHITECTURE.md, known debts).
  auto catalog = parse_price_file(ImportFormat::ec2instances, FLEETCAST_SHARED_DATA_DIR "/prices/ec2instances_gpu_2025-11-30.json");
  REQUIRE(catalog.ok());
  catalog->billing_rules = {BillingRule{"aws", Seconds{1}, Seconds{60}}};  // the file has prices only
  const InMemoryPriceSource prices(std::move(*catalog));
  const Scenario scenario = testing::load(R"({"version": 1, "name": "gpu2023", "seed": 7,
    "horizon": {"start": "1970-04-26T08:05:00Z", "duration": "30d", "step": "1h"},
    "pricing": {"provider": "aws", "regions": ["us-east-1", "us-west-2"]},
    "instance_types": ["p4d.24xlarge", "p5.48xlarge", "g6e.xlarge", "g6e.12xlarge", "g5.12xlarge"],
    "purchase_options": ["on_demand", "reserved", "spot"],
    "workloads": [{"name": "load", "kind": "service", "gpu": {"min_gpu_memory_gib": 24},
                   "demand": {"unit": "gpus", "csv": ")" + series + R"("},
                   "slo": {"target_utilisation": 0.9, "max_unserved_fraction": 0.005}}],
    "spot": {"max_share_per_pool_percent": 25},
    "demand_outlook": {"monthly_growth_percent": 0, "monthly_volatility_percent": 0,
                       "migration_probability_per_year": 0, "discount_rate_percent_per_year": 0},
    "policy": {"kind": "predictive", "predictive": {}}})", prices);
  PlanOptions options;
  options.replicas = 0;
  auto plan = make_plan(scenario, prices, options);
  INFO((plan.ok() ? std::string() : plan.status().message()));
  REQUIRE(plan.ok());
  REQUIRE(plan->horizon.intervals() == 720);
  std::size_t changes = 0;
  for (const PlannedGroup& group : plan->groups) changes = std::max(changes, group.schedule.size());
  CHECK(changes > kAwsMaxScheduledActionsPerGroup);  // the plan itself would not fit
  for (const PlannedGroup& group : plan->groups) CHECK(group.launch_lead > Seconds{0});  // rises are launched ahead
  // The reported extra bounds what the added instances cost, not how their launches shift the
  // random draws (refusals, delays, interruptions) the rest of the run takes (ARCHITECTURE.md,
  // known debts): here 0.02% of the plan's cost beyond it; 0.5% allowed.
  check_exports(scenario, prices, *plan, PlanDemand::scenario, 0.005);
}

TEST_CASE("a plan edited in memory so that its parts disagree is refused by export and simulation",
          "[export][simulation]") {
  const PlannedExample example = plan_example(FLEETCAST_SOURCE_DIR "/scenarios/examples/recsys_planned.json");
  const Plan& made = example.plan;
  REQUIRE_FALSE(made.groups.empty());
  REQUIRE_FALSE(made.groups[0].instances.empty());
  REQUIRE(check_plan_groups(made).ok());
  const auto refused = [&](const Plan& plan, const std::string& expected) {
    INFO(expected);
    CHECK_THAT(check_plan_groups(plan).message(), Catch::Contains(expected));
    auto rendered = render_export(plan, ExportFormat::aws);
    REQUIRE_FALSE(rendered.ok());
    CHECK_THAT(rendered.status().message(), Catch::Contains(expected));
    SimulationOptions options;
    options.replicas = 1;
    auto simulated = simulate_plan(example.scenario, plan, *example.prices, options, PlanDemand::forecast);
    REQUIRE_FALSE(simulated.ok());
    CHECK_THAT(simulated.status().message(), Catch::Contains(expected));
  };
  const std::string group = "plan group '" + made.groups[0].name + "', ";

  refused(Plan{}, "horizon duration: expected a positive duration");  // a default Plan: no division by its zero step
  Plan plan = made;
  plan.groups[0].pools[0] = plan.pools.size();
  refused(plan, group + "pools/0: expected the index of one of the plan's");
  plan = made;
  plan.groups[0].instances[0].pop_back();
  refused(plan, group + "instances/0: expected one count per horizon interval");
  plan = made;
  plan.groups[0].instances.pop_back();
  refused(plan, group + "instances: expected one row of instance counts per pool of the group");
  // One more instance in the first interval than the schedule states: exported from the
  // instances, simulated from them, the schedule saying otherwise.
  plan = made;
  plan.groups[0].instances[0][0] += 1;
  refused(plan, group + "schedule: expected the capacity of the group's instances");

  // The plan as exported (whole instances above the exported capacity) is itself a plan.
  for (const ExportFormat format : {ExportFormat::aws, ExportFormat::kubernetes}) {
    auto rendered = render_export(made, format);
    REQUIRE(rendered.ok());
    INFO(check_plan_groups(rendered->exported).message());
    CHECK(check_plan_groups(rendered->exported).ok());
    auto reread = plan_from_json(plan_to_json(rendered->exported), "exported");
    INFO((reread.ok() ? std::string() : reread.status().message()));
    CHECK(reread.ok());
  }
}
