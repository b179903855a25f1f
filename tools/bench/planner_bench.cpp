// Planner benchmark: a 30-day hourly plan for 50 services over 60 pools (15 GPU instance types x
// 2 regions x on-demand and spot, with reserved offers), real AWS prices from
// ../shared/data/prices, demand history of 14 days per service (synthetic daily and weekly
// patterns with noise, written to a scratch folder). Prints the median wall time of make_plan
// (forecasting with Holt-Winters, commitments, placement, groups; no risk simulation) over runs,
// and the process's peak resident memory.
//
// --services and --pools scale the problem: pools are instance types x regions x 2, over the
// fewest regions (us-east-1, us-west-2, then ap-northeast-1, eu-central-1, us-east-2) that have
// enough instance types priced on-demand, reserved and spot in each (300 pools: 50 types x 3).
//
// Usage: bench_planner [repetitions=3] [forecaster=holt_winters] [--services 50] [--pools 60]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fleetcast/plan.h"
#include "peak_memory.h"

using namespace fleetcast;

namespace {

const char* const kRegions[] = {"us-east-1", "us-west-2", "ap-northeast-1", "eu-central-1", "us-east-2"};

struct BenchSize {
  int repetitions = 3;
  std::string forecaster = "holt_winters";
  int services = 50;
  int pools = 60;
};

// Positional repetitions and forecaster (as before), then named options; nullopt on a malformed line.
std::optional<BenchSize> parse_arguments(int argc, char** argv) {
  BenchSize size;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (argument == "--services" || argument == "--pools") {
      if (i + 1 >= argc) return std::nullopt;
      (argument == "--services" ? size.services : size.pools) = std::max(1, std::atoi(argv[++i]));
    } else if (argument.starts_with("--")) {
      return std::nullopt;
    } else if (positional++ == 0) {
      size.repetitions = std::max(1, std::atoi(argv[i]));
    } else {
      size.forecaster = argument;
    }
  }
  return size;
}

// Instance types with on-demand, reserved and spot prices in every one of the regions, by name.
std::vector<std::string> candidate_types(const PriceSource& prices, const std::vector<std::string>& regions) {
  std::map<std::string, std::set<std::string>> seen;  // type -> "region/option"
  for (const std::string& region : regions) {
    OfferQuery query;
    query.provider = "aws";
    query.regions = {region};
    const std::vector<OfferRow> rows = prices.offers(query).value();
    for (const OfferRow& row : rows) {
      if (row.instance_type.gpu_count < 1) continue;
      seen[row.offer.pool.instance_type].insert(std::string(region) + "/" + std::string(purchase_option_name(row.offer.pool.option)));
      PoolKey spot = row.offer.pool;
      spot.option = PurchaseOption::spot;
      if (!prices.spot_price_history(spot).value().empty()) seen[spot.instance_type].insert(std::string(region) + "/spot");
    }
  }
  std::vector<std::string> types;
  for (const auto& [type, kinds] : seen) {
    if (kinds.size() == 3 * regions.size()) types.push_back(type);
  }
  return types;
}

// The fewest regions (at least 2) whose common instance types give `pools` pools (types x
// regions x on-demand and spot), and the first of those types by name; empty when none do.
std::pair<std::vector<std::string>, std::vector<std::string>> regions_and_types(const PriceSource& prices, int pools) {
  for (std::size_t count = 2; count <= std::size(kRegions); ++count) {
    const std::vector<std::string> regions(std::begin(kRegions), std::begin(kRegions) + count);
    const auto per_type = static_cast<int>(2 * count);
    if (pools % per_type != 0) continue;
    std::vector<std::string> types = candidate_types(prices, regions);
    if (static_cast<int>(types.size()) < pools / per_type) continue;
    types.resize(static_cast<std::size_t>(pools / per_type));
    return {regions, types};
  }
  return {};
}


std::string write_history(const std::filesystem::path& folder, int w) {
  const std::filesystem::path file = folder / ("service-" + std::to_string(w) + ".csv");
  std::ofstream out(file);
  out << "timestamp,value\n";
  const double base = 20 + 7 * (w % 13);
  std::uint64_t state = 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(w + 1);
  for (int hour = 0; hour < 44 * 24; ++hour) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double noise = (static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5) * 0.1;
    const double daily = 1 + 0.3 * std::cos(2 * 3.14159265358979 * ((hour % 24) - (w % 24)) / 24.0);
    const double weekly = (hour / 24) % 7 >= 5 ? 0.85 : 1.0;
    out << hour * 3600 << ',' << base * daily * weekly * (1 + noise) << '\n';
  }
  return file.string();
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<BenchSize> size = parse_arguments(argc, argv);
  if (!size) {
    std::fprintf(stderr, "usage: bench_planner [repetitions] [forecaster] [--services N] [--pools N]\n");
    return 2;
  }
  const std::filesystem::path prices_file = std::filesystem::path(FLEETCAST_SOURCE_DIR) / "../shared/data/prices/ec2instances_gpu_2025-11-30.json";
  auto catalog = parse_price_file(ImportFormat::ec2instances, prices_file);
  if (!catalog.ok()) {
    std::fprintf(stderr, "%s\n", catalog.status().to_string().c_str());
    return 1;
  }
  catalog->billing_rules = {BillingRule{"aws", Seconds{1}, Seconds{60}}};
  const InMemoryPriceSource prices(std::move(*catalog));
  const auto [regions, types] = regions_and_types(prices, size->pools);
  if (types.empty()) {
    std::fprintf(stderr, "no set of regions gives %d pools of instance types priced on-demand, reserved and spot\n", size->pools);
    return 1;
  }
  const std::filesystem::path folder = std::filesystem::temp_directory_path() / "fleetcast-bench-planner";
  std::filesystem::create_directories(folder);
  std::string type_list, region_list, workloads;
  for (const std::string& type : types) type_list += (type_list.empty() ? "\"" : ", \"") + type + "\"";
  for (const std::string& region : regions) region_list += (region_list.empty() ? "\"" : ", \"") + region + "\"";
  for (int w = 0; w < size->services; ++w) {
    workloads += std::string(w > 0 ? "," : "") + R"({"name": "service-)" + std::to_string(w) + R"(", "kind": "service",
      "demand": {"unit": "gpus", "csv": ")" + write_history(folder, w) + R"(", "origin": "2026-01-01T00:00:00Z"},
      "slo": {"target_utilisation": 0.8}})";
  }
  const std::string json = R"({"version": 1, "name": "bench-)" + std::to_string(size->services) + "x" +
                           std::to_string(size->pools) + R"(", "seed": 1,
    "horizon": {"start": "2026-01-15T00:00:00Z", "duration": "30d", "step": "1h"},
    "pricing": {"provider": "aws", "regions": [)" + region_list + R"(]},
    "instance_types": [)" + type_list + R"(], "purchase_options": ["on_demand", "reserved", "spot"],
    "workloads": [)" + workloads + R"(], "spot": {"max_share_per_pool_percent": 30},
    "policy": {"kind": "predictive", "predictive": {}}})";
  ScenarioValidation validation = validate_scenario_json(json, folder / "bench.json", &prices);
  if (!validation.valid()) {
    for (const auto& diagnostic : validation.diagnostics) std::fprintf(stderr, "%s\n", diagnostic.to_string().c_str());
    return 1;
  }
  PlanOptions options;
  options.replicas = 0;
  options.forecaster = size->forecaster;
  std::vector<double> seconds;
  Plan plan;
  for (int i = 0; i < size->repetitions; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto made = make_plan(*validation.scenario, prices, options);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!made.ok()) {
      std::fprintf(stderr, "%s\n", made.status().to_string().c_str());
      return 1;
    }
    plan = std::move(*made);
  }
  std::sort(seconds.begin(), seconds.end());
  std::printf("planner: %d services x %zu pools (%zu instance types x %zu regions x on-demand/spot), 720 hourly intervals, %s\n",
              size->services, types.size() * regions.size() * 2, types.size(), regions.size(), size->forecaster.c_str());
  std::printf("  make_plan: median %.3f s of %d runs (min %.3f, max %.3f)\n", seconds[seconds.size() / 2], size->repetitions,
              seconds.front(), seconds.back());
  std::printf("  plan: %zu pools used, %zu groups, %zu reservation lines, %zu Savings Plans, planned $%.0f\n", plan.pools.size(),
              plan.groups.size(), plan.commitments.size(), plan.savings_plans.size(), plan.expected.planned_cost.usd());
  for (const SavingsPlanRecommendation& bought : plan.savings_plans) {
    std::printf("    %s from %s: saving $%.0f over the horizon, $%.0f expected over the term\n", savings_plan_label(bought.plan).c_str(),
                format_instant(bought.plan.start).c_str(), bought.expected_saving.usd(), bought.term.expected_net_saving.usd());
  }
  std::printf("  planned cost exactly %s USD\n", format_usd(plan.expected.planned_cost).c_str());
  std::printf("  peak resident memory %.0f MiB (the whole process)\n", bench::peak_resident_mib());
  std::filesystem::remove_all(folder);
  return 0;
}
