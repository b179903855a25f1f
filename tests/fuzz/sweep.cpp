// Sweep files: the input is the sweep JSON, then (after a "\n--8<--\n" line) the base scenario
// written as `base.json` next to it, then the `demand.csv` that scenario may name, so that
// "base": "base.json" reaches the expansion and the validation of every point.
#include "scenarios/sweep.h"
#include "tests/fuzz/fuzz_support.h"

using namespace fleetcast;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 3);
  fuzz::no_escape([&] {
    const std::filesystem::path& dir = fuzz::scratch_dir();
    fuzz::write_file(dir / "base.json", parts[1]);
    fuzz::write_file(dir / "demand.csv", parts[2]);
    auto sweep = scenarios::read_sweep_json(parts[0], dir / "sweep.json");
    if (!sweep.ok()) fuzz::explain(sweep.status().message());
    if (sweep.ok()) {
      fuzz::expect(!sweep->points.empty(), "a sweep expanded to no points");
      fuzz::expect(sweep->points.size() <= scenarios::kMaxSweepPoints, "a sweep expanded past kMaxSweepPoints");
    }
  });
  return 0;
}
