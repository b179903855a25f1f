// Forecast documents a plan takes in place of its forecaster (`plan --forecast WORKLOAD=FILE`, the
// JSON `forecast predict --json` writes). A forecast the reader accepts must keep the contract the
// planner relies on: levels strictly ascending in (0, 1) with the median among them, one row of
// finite values >= 0 per level, every row as long, non-decreasing across levels, a positive step.
#include <cmath>

#include "fleetcast/forecast.h"
#include "tests/fuzz/fuzz_support.h"

using namespace fleetcast;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::no_escape([&] {
    auto forecast = forecast::quantile_forecast_from_json(text, "forecast.json");
    if (!forecast.ok()) return fuzz::explain(forecast.status().message());
    const auto& levels = forecast->levels;
    fuzz::expect(forecast->step.count() > 0, "an accepted forecast has no positive step");
    fuzz::expect(forecast->horizon() >= 2, "an accepted forecast has fewer than two steps");
    fuzz::expect(forecast->values.size() == levels.size(), "an accepted forecast has a row count other than its level count");
    bool median = false;
    for (std::size_t q = 0; q < levels.size(); ++q) {
      fuzz::expect(levels[q] > 0 && levels[q] < 1 && (q == 0 || levels[q] > levels[q - 1]), "accepted levels are not ascending in (0, 1)");
      median = median || levels[q] == 0.5;
      fuzz::expect(forecast->values[q].size() == forecast->horizon(), "an accepted forecast's rows differ in length");
      for (std::size_t h = 0; h < forecast->horizon(); ++h) {
        const double value = forecast->values[q][h];
        fuzz::expect(std::isfinite(value) && value >= 0, "an accepted forecast holds a value that is not finite and >= 0");
        fuzz::expect(q == 0 || value >= forecast->values[q - 1][h], "an accepted forecast's quantiles decrease with the level");
      }
    }
    fuzz::expect(median, "an accepted forecast has no median");
  });
  return 0;
}
