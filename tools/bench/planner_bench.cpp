// Planner benchmark: a 30-day hourly plan for 50 services over 60 pools (15 GPU instance types x
// 2 regions x on-demand and spot, with reserved offers), real AWS prices from
// ../shared/data/prices, demand history of 14 days per service (synthetic daily and weekly
// patterns with noise, written to a scratch folder). Prints the median wall time of make_plan
// (forecasting with Holt-Winters, commitments, placement, groups; no risk simulation) over runs.
//
// Usage: bench_planner [repetitions=3] [forecaster=holt_winters]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fleetcast/plan.h"

using namespace fleetcast;

namespace {

constexpr int kWorkloads = 50;
constexpr int kTypes = 15;
const char* const kRegions[] = {"us-east-1", "us-west-2"};

// Instance types with on-demand, reserved and spot prices in both regions, first kTypes by name.
std::vector<std::string> candidate_types(const PriceSource& prices) {
  std::map<std::string, std::set<std::string>> seen;  // type -> "region/option"
  for (const char* region : kRegions) {
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
    if (kinds.size() == 6 && static_cast<int>(types.size()) < kTypes) types.push_back(type);
  }
  return types;
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
  const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const std::string forecaster = argc > 2 ? argv[2] : "holt_winters";
  const std::filesystem::path prices_file = std::filesystem::path(FLEETCAST_SOURCE_DIR) / "../shared/data/prices/ec2instances_gpu_2025-11-30.json";
  auto catalog = parse_price_file(ImportFormat::ec2instances, prices_file);
  if (!catalog.ok()) {
    std::fprintf(stderr, "%s\n", catalog.status().to_string().c_str());
    return 1;
  }
  catalog->billing_rules = {BillingRule{"aws", Seconds{1}, Seconds{60}}};
  const InMemoryPriceSource prices(std::move(*catalog));
  const std::vector<std::string> types = candidate_types(prices);
  const std::filesystem::path folder = std::filesystem::temp_directory_path() / "fleetcast-bench-planner";
  std::filesystem::create_directories(folder);
  std::string type_list, workloads;
  for (const std::string& type : types) type_list += (type_list.empty() ? "\"" : ", \"") + type + "\"";
  for (int w = 0; w < kWorkloads; ++w) {
    workloads += std::string(w > 0 ? "," : "") + R"({"name": "service-)" + std::to_string(w) + R"(", "kind": "service",
      "demand": {"unit": "gpus", "csv": ")" + write_history(folder, w) + R"(", "origin": "2026-01-01T00:00:00Z"},
      "slo": {"target_utilisation": 0.8}})";
  }
  const std::string json = R"({"version": 1, "name": "bench-50x60", "seed": 1,
    "horizon": {"start": "2026-01-15T00:00:00Z", "duration": "30d", "step": "1h"},
    "pricing": {"provider": "aws", "regions": ["us-east-1", "us-west-2"]},
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
  options.forecaster = forecaster;
  std::vector<double> seconds;
  Plan plan;
  for (int i = 0; i < repetitions; ++i) {
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
  std::printf("planner: %d services x %zu pools (%zu instance types x 2 regions x on-demand/spot), 720 hourly intervals, %s\n",
              kWorkloads, types.size() * 4, types.size(), forecaster.c_str());
  std::printf("  make_plan: median %.3f s of %d runs (min %.3f, max %.3f)\n", seconds[seconds.size() / 2], repetitions,
              seconds.front(), seconds.back());
  std::printf("  plan: %zu pools used, %zu groups, %zu reservation lines, planned $%.0f\n", plan.pools.size(), plan.groups.size(),
              plan.commitments.size(), plan.expected.planned_cost.usd());
  std::filesystem::remove_all(folder);
  return 0;
}
