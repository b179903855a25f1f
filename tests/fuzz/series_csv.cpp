// The CSVs a scenario names: demand histories (`timestamp,value`, read_time_series_csv) and spot
// availability traces (`t_seconds,available`, read by the simulator). Both readers get every input
// as a file, since they take paths; the CSV layer underneath is reached by both.
#include "core/csv.h"
#include "engine/spot_market.h"
#include "fleetcast/time_series.h"
#include "tests/fuzz/fuzz_support.h"

using namespace fleetcast;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::no_escape([&] {
    const std::filesystem::path file = fuzz::scratch_dir() / "series.csv";
    fuzz::write_file(file, text);
    if (auto series = read_time_series_csv(file); series.ok()) {
      fuzz::expect(!series->values.empty(), "a time series was read without values");
      fuzz::expect(series->values.size() == 1 || series->step.count() > 0, "a time series was read with a step <= 0");
    }
    if (auto trace = engine::read_availability_trace(file); trace.ok()) {
      fuzz::expect(trace->length.count() > 0, "an availability trace was read with a length <= 0");
    }
  });
  return 0;
}
