// The forecasting JSON documents (what `fleetcast forecast predict|eval --json` print), read back
// field by field against the values put in.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "fleetcast/forecast.h"

namespace fleetcast::forecast {
namespace {

TEST_CASE("forecast json: a quantile forecast lists each step's timestamp and quantiles", "[models]") {
  QuantileForecast forecast;
  forecast.start_seconds = 3600;
  forecast.step = Seconds{1800};
  forecast.levels = {0.1, 0.5, 0.9};
  forecast.values = {{1, 2}, {3, 4}, {5, 6}};
  const auto document = nlohmann::json::parse(quantile_forecast_json(forecast, {"cpu", "no CUDA device"}));
  CHECK(document["model"] == "lstm");
  CHECK(document["backend"]["name"] == "cpu");
  CHECK(document["backend"]["reason"] == "no CUDA device");
  REQUIRE(document["steps"].size() == 2);
  CHECK(document["steps"][1]["timestamp"] == 3600 + 1800);  // start + one step
  CHECK(document["steps"][1]["quantiles"]["p10"] == 2.0);
  CHECK(document["steps"][1]["quantiles"]["p50"] == 4.0);
  CHECK(document["steps"][1]["quantiles"]["p90"] == 6.0);
}

TEST_CASE("forecast json: a backtest report lists each model's metrics", "[models]") {
  BacktestReport report;
  report.lstm_training_seconds = 2.5;
  report.scores.push_back({"holt_winters", "cpu", {0.9, 12.5, 1.7, 0.8, 336}});
  const auto document = nlohmann::json::parse(backtest_report_json(report, "load.csv", {"cpu", ""}));
  CHECK(document["series"] == "load.csv");
  CHECK(document["lstm_training_seconds"] == 2.5);
  const auto& model = document["models"]["holt_winters"];
  CHECK(model["mase"] == 0.9);
  CHECK(model["smape"] == 12.5);
  CHECK(model["pinball"] == 1.7);
  CHECK(model["coverage_p10_p90"] == 0.8);
  CHECK(model["points"] == 336);
  CHECK(model["backend"] == "cpu");
}

}  // namespace
}  // namespace fleetcast::forecast
