#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fleetcast/report.h"
#include "report/html_page.h"

namespace {

using fleetcast::report::Bucket;

// The charts' specifications, as the page's script reads them.
nlohmann::json specs_of(const std::string& html) {
  const std::string open = "id=\"fleetcast-specs\">";
  const auto begin = html.find(open);
  REQUIRE(begin != std::string::npos);
  const auto end = html.find("</script>", begin);
  return nlohmann::json::parse(html.substr(begin + open.size(), end - begin - open.size()));
}

// A two-hour plan named `name` on one pool, g6.xlarge on demand at $1/h, running `instances` in
// each hour.
fleetcast::Plan two_hour_plan(const std::string& name, std::vector<int> instances) {
  using namespace fleetcast;
  Plan plan;
  plan.scenario = name;
  plan.horizon = Horizon{Instant{Seconds{1'798'761'600}}, Seconds{2 * 3600}, Seconds{3600}};
  plan.pools.push_back(PlannedPool{"aws/us-east-1/g6.xlarge/on_demand", "aws", "us-east-1", "g6.xlarge", PurchaseOption::on_demand,
                                   "L4", 1, Money::from_usd(1.0)});
  plan.instances = {std::move(instances)};
  return plan;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("report::downsample keeps each bucket's mean, minimum and maximum", "[report]") {
  const std::vector<double> values = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const std::vector<Bucket> buckets = fleetcast::report::downsample(values, 3);
  REQUIRE(buckets.size() == 4);
  CHECK(buckets[0].first == 0);
  CHECK(buckets[0].mean == Approx(2.0));
  CHECK(buckets[1].min == 4);
  CHECK(buckets[1].max == 6);
  CHECK(buckets[3].first == 9);
  CHECK(buckets[3].mean == 10);  // the last bucket holds what is left
}

TEST_CASE("report::bucket_size fits a year at 5 minutes in 2,000 points", "[report]") {
  const std::size_t samples = 365 * 288;  // 105,120
  const std::size_t size = fleetcast::report::bucket_size(samples, 2000);
  CHECK(size == 53);  // ceil(105120 / 2000)
  CHECK((samples + size - 1) / size <= 2000);
  CHECK(fleetcast::report::bucket_size(500, 2000) == 1);
}

TEST_CASE("report::sanitise_utf8 replaces invalid bytes and keeps valid sequences", "[report]") {
  using fleetcast::report::sanitise_utf8;
  CHECK(sanitise_utf8("a\xff" "b") == "a\xEF\xBF\xBD" "b");
  CHECK(sanitise_utf8("caf\xC3\xA9") == "caf\xC3\xA9");
  CHECK(sanitise_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // an overlong '/'
  CHECK(sanitise_utf8("\xE2\x82") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // truncated
  CHECK(fleetcast::report::escape_html("<a href='x'>&</a>") == "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;");
}

TEST_CASE("batch_report_html: a name holding </script> and invalid UTF-8 stays text", "[report]") {
  std::vector<fleetcast::batch::ParameterSetSummary> sets(2);
  sets[0] = {.scenario = "evil </script><!-- \xff", .parameters = "{\"risk\":0.9}", .runs = 2, .cost_mean_usd = 100,
             .cost_p95_usd = 110, .served_fraction_mean = 0.99, .pareto = true};
  sets[1] = {.scenario = "plain", .parameters = "{\"risk\":0.5}", .runs = 2, .cost_mean_usd = 80, .cost_p95_usd = 90,
             .served_fraction_mean = 0.95, .pareto = true};
  const std::string html = fleetcast::batch_report_html("x</title><script>alert(1)</script>", sets);
  // Five script elements: vega, vega-lite, vega-embed, the specifications, the bootstrap.
  CHECK(count(html, "</script") == 5);
  CHECK(count(html, "<!--") == 0);
  CHECK(html.find("<title>fleetcast batch: x&lt;/title&gt;&lt;script&gt;") != std::string::npos);
  const nlohmann::json specs = specs_of(html);
  REQUIRE(specs.size() == 1);
  const auto& rows = specs["chart-0"]["data"]["values"];
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["scenario"] == "evil </script><!-- \xEF\xBF\xBD");
  CHECK(rows[0]["pareto"] == true);
}

TEST_CASE("plan_report_html downsamples a year at 5 minutes and keeps the total", "[report]") {
  using namespace fleetcast;
  Plan plan;
  plan.scenario = "year";
  plan.horizon = Horizon{Instant{Seconds{1'798'761'600}}, kYear, Seconds{300}};
  const auto intervals = static_cast<std::size_t>(plan.horizon.intervals());
  plan.pools.push_back(PlannedPool{"aws/us-east-1/p5.48xlarge/on_demand", "aws", "us-east-1", "p5.48xlarge",
                                   PurchaseOption::on_demand, "H100", 8, Money::from_usd(98.32)});
  std::vector<int> counts(intervals);
  double total_gpus = 0;
  for (std::size_t k = 0; k < intervals; ++k) {
    counts[k] = static_cast<int>(k % 7);
    total_gpus += 8.0 * counts[k];
  }
  plan.instances = {counts};
  PlannedGroup group;
  group.workload = "chat";
  group.pools = {0};
  group.instances = {counts};
  group.max_capacity = 48;
  for (std::size_t k = 0; k < intervals; ++k) {  // the schedule states what the instances hold (check_plan_groups)
    const Instant at = plan.horizon.start + plan.horizon.step * static_cast<std::int64_t>(k);
    group.schedule.push_back(CapacityChange{at, 8 * counts[k], group.max_capacity, 8 * counts[k]});
  }
  plan.groups.push_back(group);
  WorkloadForecast forecast;
  forecast.workload = "chat";
  forecast.levels = {0.1, 0.5, 0.9};
  forecast.values = {std::vector<double>(intervals, 1), std::vector<double>(intervals, 2), std::vector<double>(intervals, 3)};
  plan.forecasts.push_back(forecast);
  const nlohmann::json specs = specs_of(plan_report_html(plan));
  const auto& timeline = specs["chart-0"];
  const auto& capacity = timeline["datasets"]["capacity"];
  CHECK(capacity.size() == (intervals + 52) / 53);
  CHECK(timeline["datasets"]["band"].size() == capacity.size());
  // Each row is the mean of 53 intervals (the last of what is left): weighted back, the total.
  double sum = 0;
  for (std::size_t i = 0; i < capacity.size(); ++i) {
    const std::size_t n = std::min<std::size_t>(53, intervals - i * 53);
    sum += capacity[i]["gpus"].get<double>() * static_cast<double>(n);
  }
  CHECK(sum == Approx(total_gpus));
  CHECK(timeline["title"]["subtitle"].get<std::string>().find("downsampled for display") != std::string::npos);
}

TEST_CASE("plan_report_html lists the Savings Plans to buy and costs what they cover at their commitment", "[report]") {
  using namespace fleetcast;
  Plan plan = two_hour_plan("covered", {5, 6});
  // $2.50/h at $0.50 covers 5 instances an hour: hour 0 all of them, hour 1 five of six. Planned:
  // 2 h x $2.50 + 1 instance-hour on-demand = $6. A second plan bought past the horizon costs
  // nothing in it.
  SavingsPlanRecommendation bought;
  bought.plan = SavingsPlan{SavingsPlanType::compute, "", "", Money::from_usd(2.5), ReservationTerm::one_year,
                            UpfrontPayment::no_upfront, plan.horizon.start};
  bought.coverage = {SavingsPlanCoverage{0, Money::from_usd(0.5), false}};
  SavingsPlanRecommendation later = bought;
  later.plan.start = plan.horizon.start + kYear;
  plan.savings_plans = {bought, later};
  plan.expected.planned_cost = Money::from_usd(6.0);
  const std::string html = plan_report_html(plan);
  CHECK(count(html, "compute Savings Plan, $2.500000/h, 1y no_upfront") >= 2);  // the table, and the cost by pool
  CHECK(html.find("Savings Plans to buy") != std::string::npos);
  // The cost rows add up to the plan's cost exactly: no remainder spread, no excess.
  CHECK(html.find("is not tied to a planned pool") == std::string::npos);
  CHECK(html.find("more than the plan's planned cost") == std::string::npos);
  CHECK(html.find("savings_plan") != std::string::npos);
}

TEST_CASE("plan_report_html states a batch plan's jobs and deadline misses from its simulation", "[report]") {
  using namespace fleetcast;
  Plan plan = two_hour_plan("jobs", {2, 2});
  PlannedGroup group;
  group.workload = "train";
  group.workload_kind = WorkloadKind::batch;
  group.pools = {0};
  group.instances = {{2, 2}};
  group.max_capacity = 2;
  group.schedule.push_back(CapacityChange{plan.horizon.start, 2, 2, 2});
  plan.groups.push_back(group);
  plan.expected.replicas = 8;
  plan.expected.jobs_mean = 49.875;
  plan.expected.deadline_miss_fraction = 0.0125;
  plan.expected.deadline_attainment = 0.75;
  const std::string html = plan_report_html(plan);
  CHECK(html.find("Batch work: 49.9 jobs per path on average, 1.25% of them missed their deadline; the misses stayed "
                  "within the tightest deadline-miss budget in 75% of the paths.") != std::string::npos);
  // A plan of services alone says nothing of jobs.
  plan.groups.front().workload_kind = WorkloadKind::service;
  CHECK(plan_report_html(plan).find("Batch work") == std::string::npos);
}

TEST_CASE("max_capacity_note counts workload-intervals, and says nothing of none", "[report]") {
  CHECK(fleetcast::max_capacity_note(0).empty());
  CHECK(fleetcast::max_capacity_note(1) == "target tracking stopped at the groups' maximum capacity in 1 workload-interval");
  CHECK(fleetcast::max_capacity_note(2) == "target tracking stopped at the groups' maximum capacity in 2 workload-intervals");
}

TEST_CASE("simulation_report_html states where target tracking stopped at the groups' maximum, and only there", "[report]") {
  fleetcast::SimulationReport report;
  report.scenario = "capped";
  report.replicas.emplace_back();
  report.replicas.front().intervals_at_max_capacity = 3;
  const std::string capped = fleetcast::simulation_report_html(report);
  CHECK(count(capped, "at the groups&#39; maximum (replica 0)") == 1);  // escaped text
  CHECK(count(capped, "target tracking stopped at the groups&#39; maximum capacity in 3 workload-intervals") == 1);
  report.replicas.front().intervals_at_max_capacity = 0;
  const std::string uncapped = fleetcast::simulation_report_html(report);
  CHECK(count(uncapped, "workload-intervals") == 0);
}
