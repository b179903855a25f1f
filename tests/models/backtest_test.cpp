// The rolling-origin backtest on the real hourly load series of ../shared/data/load/: the LSTM,
// with the default settings, beats seasonal naive on MASE and its p10-p90 interval covers 70-90%.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>

#include "fleetcast/forecast.h"
#include "tests/sanitized_build.h"

namespace fc = fleetcast::forecast;

namespace {

fleetcast::TimeSeries load_series(const std::string& file);

// The backtest of one file, run once per test process (training takes seconds).
const fc::BacktestReport& backtest(const std::string& file) {
  static std::map<std::string, fc::BacktestReport> reports;
  if (auto found = reports.find(file); found != reports.end()) return found->second;
  const fc::BackendRegistry registry;
  fc::BacktestOptions options;
  if (kSanitizedBuild) {  // two origins, two epochs
    options.origins = 2;
    options.lstm.max_epochs = 2;
  }
  auto report = fc::run_backtest(load_series(file), options, registry);
  REQUIRE(report.ok());
  return reports.emplace(file, std::move(report).value()).first->second;
}

const fc::ForecastMetrics& metrics_of(const fc::BacktestReport& report, const std::string& model) {
  for (const auto& score : report.scores) {
    if (score.model == model) return score.metrics;
  }
  FAIL("no score for " << model);
  throw;  // unreachable: FAIL throws
}

fleetcast::TimeSeries load_series(const std::string& file) {
  const std::filesystem::path path = std::filesystem::path(FLEETCAST_SHARED_DATA_DIR) / "load" / file;
  INFO("the shared load data is missing: " << path.string() << " (expected the shared/ folder beside the repository)");
  REQUIRE(std::filesystem::exists(path));
  auto series = fleetcast::read_time_series_csv(path);
  REQUIRE(series.ok());
  return std::move(series).value();
}

constexpr const char* kDlrm = "alibaba_dlrm2025_gpus_in_use_1h.csv";
constexpr const char* kGpu2023 = "alibaba_gpu2023_gpus_allocated_1h.csv";

}  // namespace

TEST_CASE(FLEETCAST_HEAVY_TEST_NAME("forecast::run_backtest: the LSTM beats seasonal naive on MASE on both Alibaba hourly series",
                                    "forecast::run_backtest scores the LSTM and seasonal naive on both Alibaba hourly series"),
          "[models][data]") {
  for (const char* file : {kDlrm, kGpu2023}) {
    const fc::BacktestReport report = backtest(file);
    const auto& lstm = metrics_of(report, "lstm");
    const auto& naive = metrics_of(report, "seasonal_naive");
    INFO(file << ": lstm MASE " << lstm.mase << ", seasonal naive " << naive.mase);
    CHECK(lstm.points == (kSanitizedBuild ? 2 : 7) * 48);
    CHECK(naive.points == lstm.points);
    if (kSanitizedBuild) {
      CHECK((std::isfinite(lstm.mase) && std::isfinite(naive.mase)));
    } else {
      CHECK(lstm.mase < naive.mase);
    }
  }
}

TEST_CASE(FLEETCAST_HEAVY_TEST_NAME("forecast::run_backtest: the LSTM's p10-p90 interval covers 70-90% on both Alibaba hourly series",
                                    "forecast::run_backtest: the LSTM's p10-p90 coverage is a share on both Alibaba hourly series"),
          "[models][data]") {
  for (const char* file : {kDlrm, kGpu2023}) {
    const auto& lstm = metrics_of(backtest(file), "lstm");
    INFO(file << ": lstm p10-p90 coverage " << lstm.coverage_p10_p90);
    CHECK(lstm.coverage_p10_p90 >= (kSanitizedBuild ? 0.0 : 0.70));
    CHECK(lstm.coverage_p10_p90 <= (kSanitizedBuild ? 1.0 : 0.90));
  }
}

TEST_CASE("forecast::run_backtest refuses a series too short for its origins", "[models]") {
  fleetcast::TimeSeries series;
  series.step = fleetcast::Seconds{3600};
  series.values.assign(300, 1.0);
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  auto report = fc::run_backtest(series, fc::BacktestOptions{}, registry);
  REQUIRE_FALSE(report.ok());
  CHECK_THAT(report.status().message(), Catch::Contains("300 samples, expected at least 424"));
}
