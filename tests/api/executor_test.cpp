// Host control over threads (fleetcast/executor.h): the library runs its parallel work on the
// executor a host passes, and the results are the same bytes whatever runs them: the library's
// own threads, a host pool, an executor that runs tasks inline, or one too busy to start them
// before the call returns.
#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "fleetcast/batch.h"
#include "fleetcast/executor.h"
#include "fleetcast/plan.h"
#include "fleetcast/run.h"
#include "fleetcast/scenario.h"
#include "fleetcast/simulation.h"

namespace fleetcast {
namespace {

// A host's executor: its own pool (here the library's make_thread_pool) behind an interface of the
// host's, counting the tasks it was given.
class HostPool final : public Executor {
 public:
  explicit HostPool(int threads) : pool_(make_thread_pool(threads)) {}
  void submit(std::function<void()> task) override {
    submitted_.fetch_add(1);
    pool_->submit(std::move(task));
  }
  [[nodiscard]] int concurrency() const override { return pool_->concurrency(); }
  [[nodiscard]] int submitted() const { return submitted_.load(); }

 private:
  std::unique_ptr<Executor> pool_;
  std::atomic<int> submitted_{0};
};

// Runs every task inside submit().
class InlineExecutor final : public Executor {
 public:
  void submit(std::function<void()> task) override { task(); }
  [[nodiscard]] int concurrency() const override { return 4; }
};

// A host whose threads are all busy: it keeps the tasks and runs them only when told, after the
// library's call has returned.
class BusyExecutor final : public Executor {
 public:
  void submit(std::function<void()> task) override {
    std::lock_guard lock(mutex_);
    held_.push_back(std::move(task));
  }
  [[nodiscard]] int concurrency() const override { return 3; }
  std::size_t run_held() {
    std::lock_guard lock(mutex_);
    for (auto& task : held_) task();
    const std::size_t count = held_.size();
    held_.clear();
    return count;
  }

 private:
  std::mutex mutex_;
  std::vector<std::function<void()>> held_;
};

Scenario quickstart() {
  auto scenario = load_scenario(std::filesystem::path(FLEETCAST_SOURCE_DIR) / "scenarios/examples/quickstart.json");
  REQUIRE(scenario.ok());
  return *scenario;
}

std::string simulated_json(const Scenario& scenario, const PriceSource& prices, Executor* executor, int threads) {
  SimulationOptions options;
  options.replicas = 6;
  options.threads = threads;
  options.executor = executor;
  auto report = simulate(scenario, prices, options);
  REQUIRE(report.ok());
  return simulation_report_json(*report);
}

TEST_CASE("api: simulate gives the same report on its own threads and on any host executor", "[api]") {
  const Scenario scenario = quickstart();
  auto prices = open_scenario_prices(scenario.pricing);
  REQUIRE(prices.ok());
  const std::string one_thread = simulated_json(scenario, **prices, nullptr, 1);
  CHECK(simulated_json(scenario, **prices, nullptr, 3) == one_thread);

  HostPool host(2);
  CHECK(simulated_json(scenario, **prices, &host, 0) == one_thread);
  CHECK(host.submitted() > 0);  // the host's threads were offered the work

  InlineExecutor inline_executor;
  CHECK(simulated_json(scenario, **prices, &inline_executor, 0) == one_thread);

  BusyExecutor busy;  // never starts a task during the call: the calling thread does the work
  CHECK(simulated_json(scenario, **prices, &busy, 0) == one_thread);
  CHECK(busy.run_held() > 0);  // the late tasks find nothing left and end
}

TEST_CASE("api: a plan's risk simulation runs on the host executor with the same plan", "[api]") {
  Scenario scenario = quickstart();
  scenario.policy.kind = PolicyKind::predictive;
  auto prices = open_scenario_prices(scenario.pricing);
  REQUIRE(prices.ok());
  PlanOptions options;
  options.replicas = 4;
  options.forecaster = "seasonal_naive";
  options.threads = 1;
  auto own = make_plan(scenario, **prices, options);
  REQUIRE(own.ok());
  HostPool host(3);
  options.executor = &host;
  auto hosted = make_plan(scenario, **prices, options);
  REQUIRE(hosted.ok());
  CHECK(plan_to_json(*hosted) == plan_to_json(*own));
  CHECK(host.submitted() > 0);
}

// Every recorded run of a fresh database filled by a batch of three seeds of the quickstart.
std::vector<batch::RunRecord> batch_records(const std::string& name, Executor* executor) {
  const auto dir = std::filesystem::path(FLEETCAST_TEST_OUTPUT_DIR) / "executor";
  std::filesystem::create_directories(dir);
  const auto sweep = dir / "seeds.sweep.json";  // one file: a run's record names its source
  {
    std::ofstream out(sweep);
    out << R"({"format_version": 1, "base": ")" << FLEETCAST_SOURCE_DIR << R"(/scenarios/examples/quickstart.json",
              "seeds": {"first": 1, "count": 3},
              "parameters": [{"name": "spot", "path": "/spot/max_share_per_pool_percent", "values": [25, 75]}]})";
  }
  auto plan = batch::plan_sweep(sweep);
  REQUIRE(plan.ok());
  const auto file = dir / (name + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(file.string() + suffix);
  auto database = batch::ResultsDatabase::open(file, batch::ResultsDatabase::Mode::read_write);
  REQUIRE(database.ok());
  batch::BatchOptions options;
  options.threads = 1;
  options.executor = executor;
  auto outcome = batch::run_batch(*plan, **database, options);
  REQUIRE(outcome.ok());
  CHECK(outcome->executed == plan->runs.size());
  auto records = (*database)->runs(false);
  REQUIRE(records.ok());
  for (auto& record : *records) record.outcome.wall_seconds = 0;  // the one figure that varies
  return *records;
}

TEST_CASE("api: a batch records the same runs on its own threads and on any host executor", "[api]") {
  const auto own = batch_records("own", nullptr);
  REQUIRE(own.size() == 6);
  HostPool host(2);
  CHECK(batch_records("host", &host) == own);
  CHECK(host.submitted() > 0);
  InlineExecutor inline_executor;
  CHECK(batch_records("inline", &inline_executor) == own);
  BusyExecutor busy;
  CHECK(batch_records("busy", &busy) == own);
  busy.run_held();
}

}  // namespace
}  // namespace fleetcast
