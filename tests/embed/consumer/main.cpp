// A planning service's job, through the installed package's public API only: a scenario built in
// code (no file), the built-in price catalog, a plan, the plan simulated against the scenario's
// demand, the AWS export rendered in memory (nothing written), and eight plans made at once on
// the service's own executor, which must all equal the one made alone. Prints one line per step;
// exits non-zero on any failure.
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fleetcast/executor.h>
#include <fleetcast/export.h>
#include <fleetcast/plan.h>
#include <fleetcast/pricing.h>
#include <fleetcast/run.h>
#include <fleetcast/scenario.h>
#include <fleetcast/version.h>

namespace {

// The service's executor, lent to the library: a thread per task (the service's own policy),
// joined when the executor goes.
class ThreadPerTask final : public fleetcast::Executor {
 public:
  void submit(std::function<void()> task) override {
    std::lock_guard lock(mutex_);
    threads_.emplace_back(std::move(task));
  }
  [[nodiscard]] int concurrency() const override { return 3; }
  ~ThreadPerTask() override { join_all(); }

  /// Waits for every task, including those submitted by tasks meanwhile.
  void join_all() {
    for (;;) {
      std::vector<std::jthread> finishing;
      {
        std::lock_guard lock(mutex_);
        if (threads_.empty()) return;
        finishing.swap(threads_);
      }
    }
  }

 private:
  std::mutex mutex_;
  std::vector<std::jthread> threads_;
};

// An image-generation API on L40S and A10G GPUs in us-east-1 for three days, planned by fleetcast.
fleetcast::Scenario service_scenario() {
  using namespace std::chrono_literals;
  fleetcast::Scenario scenario;
  scenario.name = "embedded-image-api";
  scenario.seed = 7;
  scenario.horizon = {*fleetcast::parse_instant("2026-12-07T00:00:00Z"), std::chrono::hours(72), std::chrono::hours(1)};
  scenario.pricing.provider = "aws";
  scenario.pricing.regions = {"us-east-1"};
  scenario.instance_types = {"g6e.xlarge", "g5.xlarge"};
  scenario.purchase_options = {fleetcast::PurchaseOption::on_demand, fleetcast::PurchaseOption::spot};

  fleetcast::DemandGenerator generator;
  generator.base = 24;
  generator.daily_amplitude = 0.4;
  generator.peak_hour_utc = 16;
  generator.noise = 0.05;
  fleetcast::ServiceWorkload service;
  service.demand = {fleetcast::DemandUnit::gpus, generator};
  service.throughput_per_gpu = {{"L40S", 1.0}, {"A10G", 0.55}};
  service.target_utilisation = 0.75;
  service.max_unserved_fraction = 0.005;
  fleetcast::Workload workload;
  workload.name = "image-api";
  workload.gpu.gpu_models = {"L40S", "A10G"};
  workload.gpu.min_gpu_memory_gib = 24;
  workload.spec = service;
  scenario.workloads = {workload};

  scenario.spot.max_share_per_pool_percent = 70;
  scenario.policy.kind = fleetcast::PolicyKind::predictive;
  scenario.policy.min_capacity = 8;
  scenario.policy.max_capacity = 64;
  scenario.policy.forecaster = "seasonal_naive";
  return scenario;
}

int fail(const char* step, const fleetcast::Status& status) {
  std::fprintf(stderr, "%s: %s\n", step, status.to_string().c_str());
  return 1;
}

}  // namespace

int main() {
  const fleetcast::Scenario scenario = service_scenario();
  const auto prices = fleetcast::make_builtin_price_source();
  std::printf("fleetcast %s\n%s: %lld intervals, %zu workload, built in code\n", fleetcast::library_version(),
              scenario.name.c_str(), static_cast<long long>(scenario.horizon.intervals()), scenario.workloads.size());

  ThreadPerTask pool;
  fleetcast::PlanOptions planning;
  planning.replicas = 4;
  planning.executor = &pool;
  auto plan = fleetcast::make_plan(scenario, *prices, planning);
  if (!plan.ok()) return fail("plan", plan.status());
  fleetcast::SimulationOptions simulation;
  simulation.executor = &pool;
  auto simulated = fleetcast::simulate_plan(scenario, *plan, *prices, simulation, fleetcast::PlanDemand::scenario);
  if (!simulated.ok()) return fail("simulate", simulated.status());
  std::printf("planned %zu group(s), %s; simulated against the scenario's demand: $%.2f, %.3f%% served\n",
              plan->groups.size(), fleetcast::plan_hash(*plan).c_str(), simulated->cost_usd.mean,
              simulated->served_fraction.mean * 100);

  auto rendered = fleetcast::exporters::render_export(*plan, fleetcast::exporters::ExportFormat::aws);
  if (!rendered.ok()) return fail("export", rendered.status());
  std::size_t actions = 0;
  for (const auto& group : rendered->groups) actions += group.actions;
  std::printf("AWS export in memory: %zu files, %zu scheduled actions\n", rendered->files.size(), actions);

  // Eight requests at once, each planned on a task of the service's pool and fanning its risk
  // replicas out to the same pool.
  constexpr int kConcurrent = 8;
  std::vector<std::optional<fleetcast::Result<fleetcast::Plan>>> plans(kConcurrent);
  std::mutex done_mutex;
  std::condition_variable done_cv;
  int done = 0;
  for (int i = 0; i < kConcurrent; ++i) {
    pool.submit([&, i] {
      auto made = fleetcast::make_plan(scenario, *prices, planning);
      std::lock_guard lock(done_mutex);
      plans[static_cast<std::size_t>(i)].emplace(std::move(made));
      if (++done == kConcurrent) done_cv.notify_one();
    });
  }
  {
    std::unique_lock lock(done_mutex);
    done_cv.wait(lock, [&] { return done == kConcurrent; });
  }
  pool.join_all();  // the tasks' threads may still be leaving the lambdas above
  int identical = 0;
  for (auto& made : plans) {
    if (!made->ok()) return fail("concurrent plan", made->status());
    if (fleetcast::plan_to_json(**made) == fleetcast::plan_to_json(*plan)) ++identical;
  }
  std::printf("%d concurrent plans on the service's executor, %d identical to the first\n", kConcurrent, identical);
  return identical == kConcurrent ? 0 : 1;
}
