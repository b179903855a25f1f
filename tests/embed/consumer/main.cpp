// An embedder's program: loads a scenario through the public API only and prints a summary line.
#include <cstdio>

#include <fleetcast/scenario.h>
#include <fleetcast/version.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: embed_consumer SCENARIO.json\n");
    return 2;
  }
  fleetcast::Result<fleetcast::Scenario> scenario = fleetcast::load_scenario(argv[1]);
  if (!scenario.ok()) {
    std::fprintf(stderr, "%s\n", scenario.status().to_string().c_str());
    return 1;
  }
  const auto& s = *scenario;
  const std::size_t pools = s.instance_types.size() * s.pricing.regions.size() * s.purchase_options.size();
  std::printf("fleetcast %s\n%s: %lld intervals of %s, %zu workload%s, %zu candidate pools\n",
              fleetcast::library_version(), s.name.c_str(), static_cast<long long>(s.horizon.intervals()),
              fleetcast::format_duration(s.horizon.step).c_str(), s.workloads.size(),
              s.workloads.size() == 1 ? "" : "s", pools);
  return 0;
}
