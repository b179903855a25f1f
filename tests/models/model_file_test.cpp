// The versioned model file: round trips through a file and SQLite, and refuses other versions,
// other layouts and truncated parameters.
#include <catch2/catch.hpp>
#include <sqlite3.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fleetcast/forecast.h"
#include "tests/models/synthetic_series.h"

namespace fc = fleetcast::forecast;

namespace {

const fc::LstmModel& small_model() {
  static const fc::LstmModel model = [] {
    fc::LstmOptions options;
    options.max_epochs = 2;
    options.context = 24;
    options.hidden = 8;
    return fc::train_lstm(fleetcast::test::synthetic_hourly_series(12, 1.0, 5), options).value();
  }();
  return model;
}

std::filesystem::path output_path(const std::string& name) {
  std::filesystem::create_directories(FLEETCAST_TEST_OUTPUT_DIR);
  const auto path = std::filesystem::path(FLEETCAST_TEST_OUTPUT_DIR) / name;
  std::filesystem::remove(path);
  return path;
}

void check_same(const fc::LstmModel& a, const fc::LstmModel& b) {
  CHECK(a.parameters == b.parameters);  // float -> JSON -> float is exact
  CHECK(a.calibration == b.calibration);
  CHECK(a.scaler.scale == b.scaler.scale);
  CHECK(a.scaler.level_steps == b.scaler.level_steps);
  CHECK(a.scaler.step_change == b.scaler.step_change);
  CHECK(a.scaler.change_steps == b.scaler.change_steps);
  CHECK(a.training_data_hash == b.training_data_hash);
  CHECK(a.options.hidden == b.options.hidden);
  CHECK(a.options.context == b.options.context);
  CHECK(a.options.quantiles == b.options.quantiles);
  CHECK(a.step_seconds == b.step_seconds);
  CHECK(a.validation_loss == b.validation_loss);
}

}  // namespace

TEST_CASE("forecast::save_model and load_model round-trip a model file", "[models]") {
  const auto path = output_path("round_trip.json");
  REQUIRE(fc::save_model(small_model(), path).ok());
  auto loaded = fc::load_model(path);
  REQUIRE(loaded.ok());
  check_same(small_model(), *loaded);
}

TEST_CASE("forecast::save_model_to_database round-trips through table forecast_models", "[models]") {
  const auto path = output_path("models.sqlite");
  REQUIRE(fc::save_model_to_database(small_model(), path, "dlrm").ok());
  REQUIRE(fc::save_model_to_database(small_model(), path, "dlrm").ok());  // replaces
  auto loaded = fc::load_model_from_database(path, "dlrm");
  REQUIRE(loaded.ok());
  check_same(small_model(), *loaded);
  auto missing = fc::load_model_from_database(path, "other");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("forecast_models['other']: no model of that name"));
}

TEST_CASE("forecast::save_model_to_database refuses a database of something else and leaves it as it was", "[models]") {
  const auto path = output_path("other.sqlite");
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "CREATE TABLE runs (a); CREATE TABLE meta (b)", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  const std::uintmax_t size = std::filesystem::file_size(path);
  const fleetcast::Status saved = fc::save_model_to_database(small_model(), path, "dlrm");
  REQUIRE_FALSE(saved.ok());
  CHECK(saved.code() == fleetcast::StatusCode::failed_precondition);
  CHECK_THAT(saved.message(), Catch::Contains(path.string() + ": not a model store (it holds tables meta, runs)"));
  CHECK(std::filesystem::file_size(path) == size);
  CHECK_FALSE(std::filesystem::exists(path.string() + "-wal"));
}

TEST_CASE("forecast::model_from_json refuses another version, layout or parameter count", "[models]") {
  nlohmann::json document = nlohmann::json::parse(fc::model_to_json(small_model()));
  SECTION("a version 1 file, from before the interval spread") {
    document["version"] = 1;
    document["scaler"].erase("step_change");
    document["scaler"].erase("change_steps");
    auto model = fc::model_from_json(document.dump(), "m.json");
    REQUIRE_FALSE(model.ok());
    CHECK(model.status().message() ==
          "m.json: model file version 1, this build reads version 2 (retrain the model: version 2 added the "
          "scaler's interval spread)");
  }
  SECTION("a newer version") {
    document["version"] = 3;
    CHECK(fc::model_from_json(document.dump(), "m.json").status().message() ==
          "m.json: model file version 3, this build reads version 2");
  }
  SECTION("a scaler without a positive step change, or one that makes every forecast infinite") {
    document["scaler"]["step_change"] = 0.0;
    CHECK_THAT(fc::model_from_json(document.dump(), "m.json").status().message(),
               Catch::Contains("/scaler/step_change: expected a positive number at most 1e15 (the series' units), found 0.0"));
    document["scaler"]["step_change"] = 1.0;
    document["scaler"]["scale"] = 1e308;
    CHECK_THAT(fc::model_from_json(document.dump(), "m.json").status().message(),
               Catch::Contains("/scaler/scale: expected a positive number at most 1e15 (the series' units), found 1e+308"));
  }
  SECTION("calibration factors past what training makes") {
    document["calibration"][0] = 1e308;
    CHECK_THAT(fc::model_from_json(document.dump(), "m.json").status().message(),
               Catch::Contains("m.json: invalid model file: /calibration/0: expected a factor from 0 to 5.0, found 1e+308"));
    document["calibration"][0] = -1.0;
    CHECK_THAT(fc::model_from_json(document.dump(), "m.json").status().message(),
               Catch::Contains("/calibration/0: expected a factor from 0 to 5.0, found -1.0"));
    document["calibration"].erase(0);
    CHECK_THAT(fc::model_from_json(document.dump(), "m.json").status().message(),
               Catch::Contains("/calibration has 2 values, expected one per quantile (3)"));
  }
  SECTION("another gate order") {
    document["layout"]["gate_order"] = "i,g,f,o";
    CHECK_THAT(fc::model_from_json(document.dump(), "m.json").status().message(),
               Catch::Contains("does not match this build's contract"));
  }
  SECTION("missing parameters") {
    document["parameters"].erase(0);
    CHECK_THAT(fc::model_from_json(document.dump(), "m.json").status().message(),
               Catch::Contains("/parameters has"));
  }
  SECTION("counts that are not exact integers of their type, and parameters beyond float32") {
    // nlohmann would convert these with undefined behaviour (1e300 to int), truncation (1.5) or
    // wrap-around (-1 to an unsigned seed); each is refused at its pointer.
    const auto refused = [&](const char* pointer, const nlohmann::json& value, const std::string& expected) {
      nlohmann::json changed = document;
      changed[nlohmann::json::json_pointer(pointer)] = value;
      auto model = fc::model_from_json(changed.dump(), "m.json");
      REQUIRE_FALSE(model.ok());
      CHECK_THAT(model.status().message(), Catch::Contains(std::string(pointer) + ": " + expected));
    };
    refused("/version", 1e300, "expected an integer from -2147483648 to 2147483647, found 1e+300");
    refused("/options/layers", 1.5, "expected an integer");
    refused("/options/seed", -1, "expected an integer from 0 to 18446744073709551615, found -1");
    refused("/training/samples", -3, "expected an integer from 0");
    refused("/series/season_steps", 4294967296LL, "expected an integer from -2147483648 to 2147483647");
    refused("/parameters/0", 1e300, "expected a float32 number, found 1e+300");
    refused("/parameters/1", "x", "expected a float32 number");
    refused("/metrics/validation_pinball", nullptr, "expected a number, found null");
    refused("/training/seconds", "1", "expected a number, found \"1\"");
  }
  SECTION("a context or horizon no forecast's buffers could hold") {
    // A horizon of 1e9 steps made predict allocate horizon x quantiles floats and abort.
    document["options"]["horizon"] = 1'000'000'000;
    CHECK_THAT(fc::model_from_json(document.dump(), "m.json").status().message(),
               Catch::Contains("m.json: /options: LSTM options: horizon is 1000000000, expected 1..1000000"));
    document["options"]["horizon"] = 48;
    document["options"]["context"] = 1'000'001;
    CHECK_THAT(fc::model_from_json(document.dump(), "m.json").status().message(),
               Catch::Contains("context is 1000001, expected 1..1000000"));
  }
  SECTION("not a model") {
    CHECK_THAT(fc::model_from_json("{\"a\": 1}", "m.json").status().message(),
               Catch::Contains("not a fleetcast LSTM model file"));
    CHECK_THAT(fc::model_from_json("{", "m.json").status().message(), Catch::Contains("m.json: invalid model file"));
  }
}

TEST_CASE("forecast::load_model names a missing file", "[models]") {
  auto model = fc::load_model("/nonexistent/model.json");
  REQUIRE_FALSE(model.ok());
  CHECK(model.status().code() == fleetcast::StatusCode::not_found);
  CHECK_THAT(model.status().message(), Catch::Contains("/nonexistent/model.json"));
}

TEST_CASE("forecast::BackendRegistry refuses a history shorter than the model's window", "[models]") {
  const fleetcast::TimeSeries short_series = fleetcast::test::synthetic_hourly_series(1, 1.0, 6);
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  auto forecasts = registry.predict(small_model(), std::span(&short_series, 1));
  REQUIRE_FALSE(forecasts.ok());
  CHECK_THAT(forecasts.status().message(), Catch::Contains("series 0: the series has 24 samples, expected at least 48"));
}
