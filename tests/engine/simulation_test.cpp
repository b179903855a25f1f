// Fleet simulations checked against figures derived by hand from a small catalog of round prices.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/csv.h"
#include "engine/billing_ledger.h"
#include "fleetcast/simulation.h"
#include "tests/engine/test_catalog.h"

using namespace fleetcast;
using fleetcast::testing::load;
using fleetcast::testing::test_catalog;
using fleetcast::testing::usd;

namespace {

// A one-workload scenario in region r1 with the given duration, options, policy and extras.
std::string scenario_json(const std::string& duration, const std::string& options, const std::string& policy,
                          const std::string& extra = "", const std::string& demand = R"({"unit": "gpus", "generator": {"base": 4}})") {
  return R"({"version": 1, "name": "test", "seed": 5,
    "horizon": {"start": "2026-12-07T00:00:00Z", "duration": ")" + duration + R"(", "step": "1h"},
    "pricing": {"provider": "test", "regions": ["r1"]},
    "instance_types": ["one.gpu"], "purchase_options": )" + options + R"(,
    "workloads": [{"name": "w", "kind": "service", "demand": )" + demand + R"(}],
    "policy": )" + policy + extra + "}";
}

// Target tracking at 80% over noisy daily demand around 20 GPUs, with an on-demand base of 2 and
// `on_demand_percent` of the rest on-demand: a fleet that scales, launches and bills all the time.
Scenario tracking_scenario(const PriceSource& prices, const std::string& duration, int on_demand_percent,
                           const std::string& options, const std::string& extra = "") {
  return load(scenario_json(duration, options,
      R"({"kind": "target_tracking", "max_capacity": 64,
          "distribution": {"on_demand_base_capacity": 2, "on_demand_percentage_above_base": )" +
          std::to_string(on_demand_percent) + R"(}, "target_tracking": {"target_value": 80}})",
      extra, R"({"unit": "gpus", "generator": {"base": 20, "daily_amplitude": 0.5, "noise": 0.1}})"), prices);
}

// Total seconds instances ran: the horizon minus each launch's latency, read from the trace lines
// "launch <pool> #<id> ready in <duration>".
std::int64_t running_seconds(const SimulationReport& report, std::int64_t horizon_seconds) {
  std::int64_t total = 0;
  for (const std::string& line : report.trace) {
    const auto at = line.find(" ready in ");
    if (line.find(" launch ") == std::string::npos || at == std::string::npos) continue;
    total += horizon_seconds - parse_duration(line.substr(at + 10)).value().count();
  }
  return total;
}

}  // namespace

TEST_CASE("engine::billed_duration applies granularity and minimum", "[engine]") {
  const BillingRule aws{"aws", Seconds{1}, Seconds{60}};
  const BillingRule hourly{"x", Seconds{3600}, Seconds{3600}};
  CHECK(engine::billed_duration(Seconds{0}, aws) == Seconds{60});
  CHECK(engine::billed_duration(Seconds{20}, aws) == Seconds{60});
  CHECK(engine::billed_duration(Seconds{61}, aws) == Seconds{61});
  CHECK(engine::billed_duration(Seconds{61}, hourly) == Seconds{3600});
  CHECK(engine::billed_duration(Seconds{3601}, hourly) == Seconds{7200});
}

TEST_CASE("engine: a static on-demand fleet costs its rate times its running hours", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = load(scenario_json("2d", R"(["on_demand"])",
      R"({"kind": "static", "static": [{"instance_type": "one.gpu", "region": "r1", "option": "on_demand", "count": 3}]})"),
      prices);
  SimulationOptions options;
  options.record_trace = true;
  auto report = simulate(scenario, prices, options);
  REQUIRE(report.ok());
  const ReplicaOutcome& outcome = report->replicas.front();
  const std::int64_t seconds = running_seconds(*report, 2 * 86400);
  CHECK(seconds > 3 * (2 * 86400 - 600));  // each was ready within ten minutes
  // $1/h for `seconds` instance-seconds, rounded per pool-hour: within 48 micro-USD.
  CHECK(std::abs(outcome.cost.on_demand.micro_usd() - seconds * 1'000'000 / 3600) <= 48);
  CHECK(outcome.cost.total == outcome.cost.on_demand);
  CHECK(outcome.cost.spot == Money{});
  CHECK(outcome.instances_launched == 3);
  CHECK(outcome.interruptions == 0);
  // Demand 4 GPUs against 3: served 3/4 once running.
  CHECK(outcome.served_fraction == Approx(0.75).margin(0.75 * 600.0 / (2 * 86400)));
}

TEST_CASE("engine: reservations are billed every hour and cover matching on-demand instances", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const std::string commitments = R"(, "commitments": [
      {"instance_type": "one.gpu", "region": "r1", "count": 2, "term": "1y", "payment": "no_upfront", "start": "2026-06-01T00:00:00Z"},
      {"instance_type": "eight.gpu", "region": "r1", "count": 1, "term": "1y", "payment": "no_upfront", "start": "2026-06-01T00:00:00Z"}])";
  const Scenario scenario = load(scenario_json("2d", R"(["on_demand", "reserved"])",
      R"({"kind": "static", "static": [{"instance_type": "one.gpu", "region": "r1", "option": "on_demand", "count": 3}]})",
      commitments), prices);
  SimulationOptions options;
  options.record_trace = true;
  auto report = simulate(scenario, prices, options);
  REQUIRE(report.ok());
  const CostBreakdown& cost = report->replicas.front().cost;
  // 2 x $0.60 + 1 x $4.80 for 48 hours, whether used or not.
  CHECK(cost.reserved == usd("288.00"));
  // eight.gpu is not a candidate: its $230.40 is all waste. The two one.gpu reservations are
  // always covered: even in the first hour the three instances run at least 3 x (3600 - 600) s,
  // more than the 2 x 3600 s reserved.
  CHECK(cost.reserved_unused == usd("230.40"));
  // On-demand pays $1/h only for the seconds the reservations do not cover (per pool-hour rounding).
  const std::int64_t seconds = running_seconds(*report, 2 * 86400);
  CHECK(std::abs(cost.on_demand.micro_usd() - (seconds - 2 * 2 * 86400) * 1'000'000 / 3600) <= 48);
  CHECK(cost.total == cost.on_demand + cost.reserved);
}

TEST_CASE("engine: spot interruptions over many replicas match the advisor bucket's hazard", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = load(scenario_json("30d", R"(["on_demand", "spot"])",
      R"({"kind": "static", "static": [{"instance_type": "one.gpu", "region": "r1", "option": "spot", "count": 20}]})"),
      prices);
  SimulationOptions options;
  options.replicas = 24;
  auto report = simulate(scenario, prices, options);
  REQUIRE(report.ok());
  // ">20%" bucket: 25% interrupted within 30 days, so lambda = -ln(0.75) / 720 per hour.
  const double lambda = -std::log(0.75) / 720.0;
  double exposure_hours = 0;
  std::int64_t interruptions = 0;
  for (const ReplicaOutcome& outcome : report->replicas) {
    // Spot instance-hours from the bill ($0.30/h), less the notices (2 min each, no longer exposed).
    exposure_hours += outcome.cost.spot.usd() / 0.30 - outcome.interruptions * 120.0 / 3600.0;
    interruptions += outcome.interruptions;
  }
  const double expected = lambda * exposure_hours;
  INFO("interruptions " << interruptions << ", expected " << expected);
  CHECK(expected > 100);
  CHECK(std::abs(static_cast<double>(interruptions) - expected) < 5 * std::sqrt(expected));
}

TEST_CASE("engine: the report is identical whatever the thread count", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = tracking_scenario(prices, "7d", 25, R"(["on_demand", "spot"])");
  SimulationOptions one_thread;
  one_thread.replicas = 6;
  one_thread.threads = 1;
  SimulationOptions three_threads = one_thread;
  three_threads.threads = 3;
  auto a = simulate(scenario, prices, one_thread);
  auto b = simulate(scenario, prices, three_threads);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(simulation_report_json(*a) == simulation_report_json(*b));
  CHECK(simulation_intervals_csv(*a) == simulation_intervals_csv(*b));
  // Replicas differ from each other (their own streams), but a replica is reproducible.
  CHECK(a->replicas[0].cost.total != a->replicas[1].cost.total);
}

TEST_CASE("engine: target tracking capped by max capacity serves max / demand", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = load(scenario_json("2d", R"(["on_demand"])",
      R"({"kind": "target_tracking", "max_capacity": 30, "target_tracking": {"target_value": 100}})", "",
      R"({"unit": "gpus", "generator": {"base": 40}})"), prices);
  auto report = simulate(scenario, prices);
  REQUIRE(report.ok());
  // 30 GPUs serve 30 of 40 once launched (within ten minutes of the start).
  CHECK(report->replicas.front().served_fraction <= 0.75);
  CHECK(report->replicas.front().served_fraction >= 0.75 * (1 - 600.0 / (2 * 86400)));
}

TEST_CASE("engine: target tracking scales out three metric periods after demand rises", "[engine]") {
  // 4 GPUs in hour 0, 12 from hour 1 on, tracked at 100% on one.gpu: the 4 first instances launch
  // at the start (the fleet ran before it, its metric showing the start's demand); the 8 more
  // launch when the alarm has seen 3 periods of the rise, at 01:00 + 3 x period. Each GPU needed
  // and not ready goes unserved: a first instance for its launch latency L, a later one for
  // 3 x period + L, read from the trace.
  const InMemoryPriceSource prices = test_catalog();
  const std::string demand = R"({"unit": "gpus", "csv": ")" +
                             fleetcast::testing::demand_csv("detection_delay", {4, 12, 12}) + R"("})";
  for (const std::int64_t period : {10, 30, 60}) {
    const Scenario scenario = load(scenario_json("3h", R"(["on_demand"])",
        R"({"kind": "target_tracking", "target_tracking": {"target_value": 100, "metric_period": ")" +
            std::to_string(period) + R"(s"}})", "", demand), prices);
    CHECK(scenario.policy.target_tracking.detection_delay() == Seconds{3 * period});
    SimulationOptions options;
    options.record_trace = true;
    auto report = simulate(scenario, prices, options);
    REQUIRE(report.ok());
    const Instant start = scenario.horizon.start;
    std::vector<std::int64_t> launched_at;
    double unserved_gpu_seconds = 0;
    for (const std::string& line : report->trace) {
      const auto ready = line.find(" ready in ");
      if (line.find(" launch ") == std::string::npos || ready == std::string::npos) continue;
      const std::int64_t at = (parse_instant(line.substr(0, 20)).value() - start).count();
      const std::int64_t needed_from = at == 0 ? 0 : 3600;
      unserved_gpu_seconds += static_cast<double>(at - needed_from + parse_duration(line.substr(ready + 10)).value().count());
      launched_at.push_back(at);
    }
    INFO("metric period " << period << " s");
    REQUIRE(launched_at.size() == 12);
    CHECK(std::count(launched_at.begin(), launched_at.end(), 0) == 4);
    CHECK(std::count(launched_at.begin(), launched_at.end(), 3600 + 3 * period) == 8);
    const double demand_gpu_seconds = 4 * 3600 + 12 * 7200;
    CHECK(report->replicas.front().served_fraction == Approx(1 - unserved_gpu_seconds / demand_gpu_seconds).epsilon(1e-12));
  }
}

TEST_CASE("engine: target tracking scales in once the lower demand has held for the scale-in cooldown", "[engine]") {
  // 12 GPUs for two hours, then 4. At 02:00 the metric still shows 12 (a want of 12 is kept); at
  // 02:03 it shows 4, but scale-in takes the most wanted over the last 15 minutes (the cooldown),
  // so the group decides again when the 02:00 want leaves that window, at 02:15:00, and gives 8
  // GPUs back then: none before.
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = load(scenario_json("3h", R"(["on_demand"])",
      R"({"kind": "target_tracking", "target_tracking": {"target_value": 100, "scale_in_cooldown": "15m"}})", "",
      R"({"unit": "gpus", "csv": ")" + fleetcast::testing::demand_csv("scale_in_window", {12, 12, 4}) + R"("})"), prices);
  SimulationOptions options;
  options.record_trace = true;
  auto report = simulate(scenario, prices, options);
  REQUIRE(report.ok());
  std::vector<std::string> terminations;
  for (const std::string& line : report->trace) {
    if (line.find(" terminated ") != std::string::npos) terminations.push_back(line.substr(0, 20));
  }
  CHECK(terminations == std::vector<std::string>(8, "2026-12-07T02:15:00Z"));
}

TEST_CASE("engine: GPUs that serve a tiny rate each keep their capacity and are measured busy", "[engine]") {
  // The capped case above in requests/s at 1e-10 per GPU: 4e-9 requests/s need 40 GPUs, 30 serve
  // 3e-9 of them, every running GPU busy. (An absolute floor on the group's capacity once rounded
  // 30 such GPUs to none: 0% served, 0% utilisation, no scale-out.)
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = load(scenario_json("2d", R"(["on_demand"])",
      R"({"kind": "target_tracking", "max_capacity": 30, "target_tracking": {"target_value": 100}})", "",
      R"({"unit": "requests_per_second", "generator": {"base": 4e-9}}, "throughput_per_gpu": {"G1": 1e-10})"), prices);
  auto report = simulate(scenario, prices);
  REQUIRE(report.ok());
  CHECK(report->replicas.front().served_fraction <= 0.75);
  CHECK(report->replicas.front().served_fraction >= 0.75 * (1 - 600.0 / (2 * 86400)));
  CHECK(report->replicas.front().utilisation == Approx(1.0).epsilon(1e-6));
}

TEST_CASE("engine: a scenario no pool can serve is refused before it runs", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  std::string json = scenario_json("2d", R"(["on_demand"])", R"({"kind": "target_tracking", "target_tracking": {"target_value": 70}})");
  // The validator refuses it in a file, at the requirement...
  std::string unmet = json;
  unmet.replace(unmet.find(R"("kind": "service")"), 17, R"("kind": "service", "gpu": {"min_gpus_per_instance": 2})");
  const ScenarioValidation validation = validate_scenario_json(unmet, "unmet.json", &prices);
  REQUIRE_FALSE(validation.valid());
  CHECK(validation.diagnostics.front().location == "/workloads/0/gpu");
  CHECK_THAT(validation.diagnostics.front().message, Catch::Contains("no instance type of instance_types meets the requirement"));
  // ... and the simulator in a scenario an embedder built.
  Scenario scenario = load(json, prices);
  scenario.workloads[0].gpu.min_gpus_per_instance = 2;
  auto report = simulate(scenario, prices);
  REQUIRE_FALSE(report.ok());
  CHECK(report.status().code() == StatusCode::failed_precondition);
  CHECK_THAT(report.status().message(), Catch::Contains("workload 'w': no candidate pool satisfies its GPU requirement"));
}

TEST_CASE("engine: a run cancelled from another thread returns Cancelled", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = load(scenario_json("365d", R"(["on_demand"])",
      R"({"kind": "target_tracking", "target_tracking": {"target_value": 70}})"), prices);
  CancellationToken token;
  token.cancel();  // cancelled before it starts: the run notices at its first check
  SimulationOptions options;
  options.cancellation = &token;
  auto report = simulate(scenario, prices, options);
  REQUIRE_FALSE(report.ok());
  CHECK(report.status().code() == StatusCode::cancelled);
}

TEST_CASE("engine: a batch queue on a static fleet waits as long as M/M/c predicts", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  std::string json = scenario_json("365d", R"(["on_demand"])",
      R"({"kind": "static", "static": [{"instance_type": "one.gpu", "region": "r1", "option": "on_demand", "count": 4}]})");
  json.replace(json.find(R"("workloads": [)"), json.find("}]", json.find(R"("workloads": [)")) + 2 - json.find(R"("workloads": [)"),
               R"("workloads": [{"name": "jobs", "kind": "batch", "jobs": {"arrivals_per_day": 72, "gpus_per_job": 1,
                 "work": "1h", "work_distribution": "exponential", "checkpoint_interval": "10m", "deadline": "30d"}}])");
  const Scenario scenario = load(json, prices);
  SimulationOptions options;
  options.replicas = 4;
  auto report = simulate(scenario, prices, options);
  REQUIRE(report.ok());
  // M/M/4 with lambda = 3/h and mu = 1/h, so a = 3 and rho = 0.75. Erlang C by hand:
  //   1/P0 = 1 + 3 + 9/2 + 27/6 + (81/24) / (1 - 0.75) = 13 + 13.5 = 26.5
  //   C = (81/24) / (1 - 0.75) * P0 = 13.5 / 26.5 = 0.50943
  //   Wq = C / (c mu - lambda) = 0.50943 h = 1834 s
  const double expected_wait = 13.5 / 26.5 * 3600;
  double wait = 0;
  std::int64_t jobs = 0;
  for (const ReplicaOutcome& outcome : report->replicas) {
    wait += outcome.mean_job_wait_seconds * static_cast<double>(outcome.jobs_completed);
    jobs += outcome.jobs_completed;
    CHECK(outcome.deadline_misses == 0);
    CHECK(outcome.jobs_completed >= outcome.jobs_total - 30);  // all but the last few finish
  }
  wait /= static_cast<double>(jobs);
  INFO("mean wait " << wait << " s over " << jobs << " jobs, M/M/c " << expected_wait << " s");
  // Four simulated years: the mean of correlated waits is within 8% (about 3 standard errors).
  CHECK(std::abs(wait - expected_wait) < 0.08 * expected_wait);
  // Utilisation of the 4 GPUs is rho = 0.75.
  CHECK(report->replicas.front().utilisation == Approx(0.75).epsilon(0.03));
}

TEST_CASE("engine: the cost ledger adds up to the bill, hour by hour and pool by pool", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = tracking_scenario(prices, "3d", 50, R"(["on_demand", "reserved", "spot"])",
      R"(, "commitments": [{"instance_type": "one.gpu", "region": "r1", "count": 3, "term": "1y",
           "payment": "no_upfront", "start": "2026-06-01T00:00:00Z"}])");
  auto report = simulate(scenario, prices);
  REQUIRE(report.ok());
  const ReplicaOutcome& outcome = report->replicas.front();
  Money total, reserved, spot;
  std::vector<Money> by_hour(outcome.cost_by_hour.size());
  for (const LedgerEntry& entry : report->ledger) {
    total += entry.cost;
    by_hour[static_cast<std::size_t>(entry.hour)] += entry.cost;
    if (entry.charge == LedgerCharge::reserved) reserved += entry.cost;
    if (entry.charge == LedgerCharge::spot) spot += entry.cost;
  }
  CHECK(total == outcome.cost.total);
  CHECK(reserved == outcome.cost.reserved);
  CHECK(reserved == usd("0.60").times(3 * 72));  // 3 reservations for 72 hours
  CHECK(spot == outcome.cost.spot);
  CHECK(by_hour == outcome.cost_by_hour);
  const std::string csv = simulation_ledger_csv(*report, scenario.horizon.start);
  CHECK_THAT(csv, Catch::StartsWith("hour_start,pool,option,cost_usd\n2026-12-07T00:00:00Z,"));
  CHECK_THAT(csv, Catch::Contains(",test/r1/one.gpu/on_demand,reserved,1.800000\n"));
}

TEST_CASE("engine: a reservation pays off exactly above its break-even utilisation", "[engine]") {
  // One instance runs a share u of every day (a scheduled policy); a 1-year reservation at $0.60/h
  // against $1.00/h on-demand breaks even at u = 0.6 (pricing's break_even_utilisation says so
  // too). Below it the reservation costs more than it saves; above it, less.
  const InMemoryPriceSource prices = test_catalog();
  const auto daily_cost = [&](int hours_on, bool reserved) {
    const std::string policy = R"({"kind": "scheduled", "max_capacity": 1, "scheduled_actions": [
        {"name": "on", "recurrence": "0 0 * * *", "desired_capacity": 1},
        {"name": "off", "recurrence": "0 )" + std::to_string(hours_on) + R"( * * *", "desired_capacity": 0}]})";
    const std::string commitments = reserved ? R"(, "commitments": [{"instance_type": "one.gpu", "region": "r1",
        "count": 1, "term": "1y", "payment": "no_upfront", "start": "2026-06-01T00:00:00Z"}])" : "";
    const Scenario scenario = load(scenario_json("7d", R"(["on_demand", "reserved"])", policy, commitments), prices);
    auto report = simulate(scenario, prices);
    REQUIRE(report.ok());
    return report->replicas.front().cost.total.usd() / 7;
  };
  const double break_even = usd("0.60").usd() / usd("1.00").usd();
  for (int hours_on : {8, 12, 18, 22}) {
    const double utilisation = hours_on / 24.0;
    const double with_reservation = daily_cost(hours_on, true);
    const double on_demand_only = daily_cost(hours_on, false);
    INFO("u = " << utilisation << ": reserved $" << with_reservation << "/day, on-demand $" << on_demand_only << "/day");
    // With the reservation a day costs 24 x $0.60 whatever runs; without it, about u x 24 x $1.00
    // (less the launch latency each day).
    CHECK(with_reservation == Approx(24 * 0.60).margin(0.01));
    CHECK(on_demand_only == Approx(24 * utilisation).margin(0.05));
    CHECK((with_reservation < on_demand_only) == (utilisation > break_even));
  }
}

TEST_CASE("engine: simulate() refuses a predictive policy, which runs through a plan, saying so", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = load(scenario_json("2d", R"(["on_demand"])",
      R"({"kind": "predictive", "predictive": {"forecaster": "seasonal_naive"}})"), prices);
  auto report = simulate(scenario, prices);
  REQUIRE_FALSE(report.ok());
  CHECK(report.status().code() == StatusCode::failed_precondition);
  CHECK_THAT(report.status().message(), Catch::Contains("policy kind 'predictive' runs a plan: make one with `fleetcast plan`"));
}

TEST_CASE("engine: the interval records add up to the run's demand and service", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = tracking_scenario(prices, "3d", 50, R"(["on_demand", "spot"])");
  auto report = simulate(scenario, prices);
  REQUIRE(report.ok());
  REQUIRE(report->intervals.size() == 72);
  double demand = 0, served = 0;
  for (const IntervalRecord& record : report->intervals) {
    demand += record.demand[0];
    served += record.served[0];
    CHECK(record.served[0] <= record.demand[0] + 1e-9);  // an interval serves at most its demand
  }
  // Each interval holds its own hour: the mean served over intervals is the run's served fraction.
  CHECK(served / demand == Approx(report->replicas.front().served_fraction).epsilon(1e-9));
  // The first hour is served but for the launch latency (under ten minutes).
  CHECK(report->intervals.front().served[0] >= report->intervals.front().demand[0] * (1 - 600.0 / 3600));
}

TEST_CASE("engine: an instance that runs under a minute is billed the 60 s minimum", "[engine]") {
  // Every day one instance is asked for at 00:00 and given up at 00:02. It becomes ready after its
  // launch latency L (from the trace); if L < 120 s it runs 120 - L seconds and is billed
  // max(60, 120 - L) at $1/h; if not, it is cancelled while pending and costs nothing.
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = load(scenario_json("7d", R"(["on_demand"])",
      R"({"kind": "scheduled", "max_capacity": 1, "scheduled_actions": [
          {"name": "up", "recurrence": "0 0 * * *", "desired_capacity": 1},
          {"name": "down", "recurrence": "2 0 * * *", "desired_capacity": 0}]})"), prices);
  SimulationOptions options;
  options.record_trace = true;
  auto report = simulate(scenario, prices, options);
  REQUIRE(report.ok());
  std::int64_t billed_seconds = 0;
  int short_runs = 0;
  for (const std::string& line : report->trace) {
    const auto at = line.find(" ready in ");
    if (line.find(" launch ") == std::string::npos || at == std::string::npos) continue;
    const std::int64_t latency = parse_duration(line.substr(at + 10)).value().count();
    if (latency >= 120) continue;
    billed_seconds += std::max<std::int64_t>(60, 120 - latency);
    short_runs += 120 - latency < 60;
  }
  INFO(short_runs << " runs under a minute, " << billed_seconds << " s billed");
  CHECK(short_runs >= 1);  // the test exercises the minimum
  // One charge a day, each rounded once to the micro-dollar.
  CHECK(std::abs(report->replicas.front().cost.on_demand.micro_usd() - billed_seconds * 1'000'000 / 3600) <= 7);
}

TEST_CASE("engine: the ledger and interval CSVs quote names holding commas, and a report built by hand writes whole rows",
          "[engine]") {
  // A Savings Plan's ledger name holds commas ("... in us-east-1, $3.000000/h, 3y all_upfront").
  SimulationReport report;
  report.workloads = {"chat, 70b", "batch"};
  report.pools = {"aws/us-east-1/p5.48xlarge/on_demand"};
  report.ledger = {LedgerEntry{2, "ec2_instance Savings Plan for g5 in us-east-1, $3.000000/h, 3y \"all\"", LedgerCharge::savings_plan,
                               Money::from_micro_usd(3'000'000)}};
  IntervalRecord record;
  record.demand = {5};  // one value short of the two workloads; no served, no running GPUs
  report.intervals = {record};

  auto ledger = csv::parse(simulation_ledger_csv(report, Instant{}), "ledger");
  REQUIRE(ledger.ok());
  REQUIRE(ledger->rows.size() == 1);
  CHECK(ledger->rows[0][1] == report.ledger[0].pool);
  CHECK(ledger->rows[0][2] == "savings_plan");
  CHECK(ledger->rows[0][3] == "3.000000");

  auto intervals = csv::parse(simulation_intervals_csv(report), "intervals");
  REQUIRE(intervals.ok());
  CHECK(intervals->header[1] == "demand:chat, 70b");
  REQUIRE(intervals->rows.size() == 1);
  CHECK(intervals->rows[0][1] == "5");
  CHECK(intervals->rows[0][2].empty());  // what the record lacks is an empty field, never a read past its end

  CHECK_NOTHROW(nlohmann::json::parse(simulation_report_json(SimulationReport{})));  // no replica: nothing to read
}
