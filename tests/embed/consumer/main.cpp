// An embedder's program, through the public API only: loads a scenario, plans it, and renders the
// plan's AWS export in memory (nothing written), printing a summary line for each step.
#include <cstdio>

#include <fleetcast/export.h>
#include <fleetcast/plan.h>
#include <fleetcast/scenario.h>
#include <fleetcast/version.h>

namespace {

int fail(const fleetcast::Status& status) {
  std::fprintf(stderr, "%s\n", status.to_string().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: embed_consumer SCENARIO.json\n");
    return 2;
  }
  fleetcast::Result<fleetcast::Scenario> scenario = fleetcast::load_scenario(argv[1]);
  if (!scenario.ok()) return fail(scenario.status());
  const auto& s = *scenario;
  const std::size_t pools = s.instance_types.size() * s.pricing.regions.size() * s.purchase_options.size();
  std::printf("fleetcast %s\n%s: %lld intervals of %s, %zu workload%s, %zu candidate pools\n",
              fleetcast::library_version(), s.name.c_str(), static_cast<long long>(s.horizon.intervals()),
              fleetcast::format_duration(s.horizon.step).c_str(), s.workloads.size(),
              s.workloads.size() == 1 ? "" : "s", pools);

  auto prices = fleetcast::open_scenario_prices(s.pricing);
  if (!prices.ok()) return fail(prices.status());
  fleetcast::PlanOptions options;
  options.replicas = 0;
  auto plan = fleetcast::make_plan(s, **prices, options);
  if (!plan.ok()) return fail(plan.status());
  auto rendered = fleetcast::exporters::render_export(*plan, fleetcast::exporters::ExportFormat::aws);
  if (!rendered.ok()) return fail(rendered.status());
  std::size_t actions = 0;
  for (const auto& group : rendered->groups) actions += group.actions;
  std::printf("planned %zu group%s; AWS export in memory: %zu files, %zu scheduled actions\n", plan->groups.size(),
              plan->groups.size() == 1 ? "" : "s", rendered->files.size(), actions);
  return 0;
}
