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
  forecast.model = "holt_winters";
  const auto document = nlohmann::json::parse(quantile_forecast_json(forecast, {"cpu", "no CUDA device"}));
  CHECK(document["model"] == "holt_winters");
  CHECK(document["backend"]["name"] == "cpu");
  CHECK(document["backend"]["reason"] == "no CUDA device");
  REQUIRE(document["steps"].size() == 2);
  CHECK(document["steps"][1]["timestamp"] == 3600 + 1800);  // start + one step
  CHECK(document["steps"][1]["quantiles"]["p10"] == 2.0);
  CHECK(document["steps"][1]["quantiles"]["p50"] == 4.0);
  CHECK(document["steps"][1]["quantiles"]["p90"] == 6.0);
  CHECK_FALSE(document.contains("repeated_blocks"));  // only where forecast_ahead repeated a block
  forecast.repeated_blocks = {2, 3};
  const auto repeated = nlohmann::json::parse(quantile_forecast_json(forecast, {"cpu", ""}));
  CHECK(repeated["repeated_blocks"] == nlohmann::json::array({2, 3}));
}

TEST_CASE("forecast json: a quantile forecast read back is the forecast written", "[models]") {
  QuantileForecast forecast;
  forecast.start_seconds = 1'800'000'000;
  forecast.step = Seconds{300};
  forecast.levels = {0.05, 0.1, 0.5, 0.9, 0.975};
  forecast.values = {{0, 1, 2}, {0.5, 1.5, 2.5}, {3, 4, 5}, {6, 7, 8.25}, {9, 10, 11}};
  forecast.model = "seasonal_naive";
  auto read = quantile_forecast_from_json(quantile_forecast_json(forecast, {"cpu", ""}), "forecast.json");
  INFO((read.ok() ? std::string() : read.status().message()));
  REQUIRE(read.ok());
  CHECK(read->start_seconds == forecast.start_seconds);
  CHECK(read->step == forecast.step);
  CHECK(read->levels == forecast.levels);
  CHECK(read->values == forecast.values);
  CHECK(read->model == "seasonal_naive");
  CHECK(read->backend == "supplied");
}

TEST_CASE("forecast json: a quantile forecast that is not one is refused where it goes wrong", "[models]") {
  const auto refusal = [](const std::string& text) {
    auto read = quantile_forecast_from_json(text, "f.json");
    REQUIRE_FALSE(read.ok());
    CHECK(read.status().code() == StatusCode::invalid_argument);
    return read.status().message();
  };
  const std::string two = R"({"timestamp": 0, "quantiles": {"p50": 1, "p90": 2}}, {"timestamp": 60, "quantiles": {"p50": 1, "p90": 2}})";
  CHECK_THAT(refusal("{"), Catch::StartsWith("f.json: invalid forecast: line 1"));
  CHECK_THAT(refusal(R"({"steps": []})"), Catch::Contains("non-empty \"steps\" array"));
  CHECK_THAT(refusal(R"({"steps": [{"timestamp": 0, "quantiles": {"p50": 1}}]})"), Catch::Contains("/steps: expected at least two steps"));
  CHECK_THAT(refusal(R"({"model": 3, "steps": [)" + two + "]}"), Catch::Contains("/model: expected a string"));
  CHECK_THAT(refusal(R"({"steps": [{"timestamp": "now", "quantiles": {"p50": 1}}, {"timestamp": 60, "quantiles": {"p50": 1}}]})"),
             Catch::Contains("f.json: /steps/0/timestamp: expected an integer"));
  CHECK_THAT(refusal(R"({"steps": [{"timestamp": 18446744073709551615, "quantiles": {"p50": 1}}, {"timestamp": 60, "quantiles": {"p50": 1}}]})"),
             Catch::Contains("/steps/0/timestamp: expected seconds from -62167219200 to 253402300799"));
  CHECK_THAT(refusal(R"({"steps": [{"timestamp": 0, "quantiles": {"p50": 1}}, {"timestamp": -9000000000000000000, "quantiles": {"p50": 1}}]})"),
             Catch::Contains("/steps/1/timestamp: expected seconds from"));
  CHECK_THAT(refusal(R"({"steps": [{"timestamp": 0, "quantiles": {"p10": 1, "p90": 2}}, {"timestamp": 60, "quantiles": {"p10": 1, "p90": 2}}]})"),
             Catch::Contains("/steps/0/quantiles: expected the median, \"p50\""));
  CHECK_THAT(refusal(R"({"steps": [{"timestamp": 0, "quantiles": {"p50": 1, "p100": 2}}, {"timestamp": 60, "quantiles": {"p50": 1}}]})"),
             Catch::Contains("/steps/0/quantiles/p100: expected a key \"p<percent>\""));
  CHECK_THAT(refusal(R"({"steps": [{"timestamp": 0, "quantiles": {"p50": 1, "median": 2}}, {"timestamp": 60, "quantiles": {"p50": 1}}]})"),
             Catch::Contains("/steps/0/quantiles/median: expected a key"));
  CHECK_THAT(refusal(R"({"steps": [{"timestamp": 0, "quantiles": {"p50": -1}}, {"timestamp": 60, "quantiles": {"p50": 1}}]})"),
             Catch::Contains("/steps/0/quantiles/p50: expected a finite number >= 0"));
  CHECK_THAT(refusal(R"({"steps": [{"timestamp": 0, "quantiles": {"p50": 3, "p90": 2}}, {"timestamp": 60, "quantiles": {"p50": 1, "p90": 2}}]})"),
             Catch::Contains("/steps/0/quantiles: expected values that do not decrease"));
  CHECK_THAT(refusal(R"({"steps": [)" + two + R"(, {"timestamp": 120, "quantiles": {"p50": 1}}]})"),
             Catch::Contains("/steps/2/quantiles: expected the levels of step 0 (2 keys)"));
  CHECK_THAT(refusal(R"({"steps": [)" + two + R"(, {"timestamp": 150, "quantiles": {"p50": 1, "p90": 2}}]})"),
             Catch::Contains("/steps/2/timestamp: expected 120: strictly increasing timestamps at one constant step"));
  CHECK_THAT(refusal(R"({"steps": [{"timestamp": 60, "quantiles": {"p50": 1}}, {"timestamp": 60, "quantiles": {"p50": 1}}]})"),
             Catch::Contains("/steps/1/timestamp: expected 61"));
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
