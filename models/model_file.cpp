// The versioned LSTM model file: JSON with the layout contract, options, scaler, provenance,
// metrics and the float32 parameters; on disk or as a row of the SQLite table forecast_models.
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/csv.h"
#include "core/json_text.h"
#include "core/sqlite.h"
#include "models/lstm_training.h"

namespace fleetcast::forecast {

namespace {

constexpr const char* kFormat = "fleetcast.lstm_forecaster";
constexpr const char* kGateOrder = "i,f,g,o";
constexpr const char* kDtype = "float32";

using nlohmann::json;

json layout_json(const models::LstmShape& shape) {
  return {{"version", models::kLstmLayoutVersion},
          {"gate_order", kGateOrder},
          {"dtype", kDtype},
          {"input_features", models::kLstmInputFeatures},
          {"layers", shape.layers},
          {"hidden", shape.hidden},
          {"quantiles", shape.quantiles},
          {"parameter_count", shape.parameter_count()}};
}

constexpr const char* kCreateTable =
    "CREATE TABLE IF NOT EXISTS forecast_models ("
    " name TEXT PRIMARY KEY,"
    " format_version INTEGER NOT NULL,"
    " training_data_hash TEXT NOT NULL,"
    " model_json TEXT NOT NULL)";

}  // namespace

std::string model_to_json(const LstmModel& model) {
  const LstmOptions& o = model.options;
  const json document = {
      {"format", kFormat},
      {"version", LstmModel::kFileVersion},
      {"layout", layout_json(shape_of(o))},
      {"options",
       {{"layers", o.layers}, {"hidden", o.hidden}, {"context", o.context}, {"horizon", o.horizon},
        {"quantiles", o.quantiles}, {"max_epochs", o.max_epochs}, {"patience", o.patience},
        {"batch_size", o.batch_size}, {"learning_rate", o.learning_rate}, {"gradient_clip", o.gradient_clip},
        {"validation_fraction", o.validation_fraction}, {"seed", o.seed}}},
      {"series", {{"step_seconds", model.step_seconds}, {"season_steps", model.season}}},
      {"scaler",
       {{"scale", model.scaler.scale}, {"level_steps", model.scaler.level_steps},
        {"step_change", model.scaler.step_change}, {"change_steps", model.scaler.change_steps}}},
      {"training",
       {{"data_hash", model.training_data_hash}, {"samples", model.training_samples},
        {"epochs_run", model.epochs_run}, {"seconds", model.training_seconds}}},
      {"metrics", {{"train_pinball", model.train_loss}, {"validation_pinball", model.validation_loss}}},
      {"calibration", model.calibration},
      {"parameters", model.parameters}};
  return json_text::dump(document, 1);
}

Result<LstmModel> model_from_json(std::string_view text, std::string_view source) {
  const std::string where(source);
  auto parsed = json_text::parse(text);
  if (const auto* error = std::get_if<json_text::JsonTextError>(&parsed)) {
    return invalid_argument_error(where + ": invalid model file: " + error->to_string());
  }
  try {
    const json& document = std::get<json>(parsed);
    if (!document.is_object() || document.value("format", std::string()) != kFormat) {
      return invalid_argument_error(where + ": not a fleetcast LSTM model file (expected \"format\": \"" + kFormat + "\")");
    }
    const int version = document.at("version").get<int>();
    if (version != LstmModel::kFileVersion) {
      return invalid_argument_error(where + ": model file version " + std::to_string(version) +
                                    ", this build reads version " + std::to_string(LstmModel::kFileVersion) +
                                    (version < 2 ? " (retrain the model: version 2 added the scaler's interval spread)" : ""));
    }
    LstmModel model;
    const json& o = document.at("options");
    LstmOptions& options = model.options;
    options.layers = o.at("layers").get<int>();
    options.hidden = o.at("hidden").get<int>();
    options.context = o.at("context").get<int>();
    options.horizon = o.at("horizon").get<int>();
    options.quantiles = o.at("quantiles").get<std::vector<double>>();
    options.max_epochs = o.at("max_epochs").get<int>();
    options.patience = o.at("patience").get<int>();
    options.batch_size = o.at("batch_size").get<int>();
    options.learning_rate = o.at("learning_rate").get<double>();
    options.gradient_clip = o.at("gradient_clip").get<double>();
    options.validation_fraction = o.at("validation_fraction").get<double>();
    options.seed = o.at("seed").get<std::uint64_t>();
    if (Status status = check_lstm_options(options); !status.ok()) return status.with_context(where + ": /options");
    if (document.at("layout") != layout_json(shape_of(options))) {
      return invalid_argument_error(where + ": /layout " + document.at("layout").dump() +
                                    " does not match this build's contract " + layout_json(shape_of(options)).dump());
    }
    model.step_seconds = document.at("series").at("step_seconds").get<std::int64_t>();
    model.season = document.at("series").at("season_steps").get<int>();
    model.scaler.scale = document.at("scaler").at("scale").get<double>();
    model.scaler.level_steps = document.at("scaler").at("level_steps").get<int>();
    model.scaler.step_change = document.at("scaler").at("step_change").get<double>();
    model.scaler.change_steps = document.at("scaler").at("change_steps").get<int>();
    if (model.step_seconds <= 0 || model.season < 1 || !(model.scaler.scale > 0) || model.scaler.level_steps < 1 ||
        !(model.scaler.step_change > 0) || model.scaler.change_steps < 1) {
      return invalid_argument_error(
          where + ": /series or /scaler: expected a positive step, season, scale, level_steps, step_change and change_steps");
    }
    const json& training = document.at("training");
    model.training_data_hash = training.at("data_hash").get<std::string>();
    model.training_samples = training.at("samples").get<std::size_t>();
    model.epochs_run = training.at("epochs_run").get<int>();
    model.training_seconds = training.at("seconds").get<double>();
    model.train_loss = document.at("metrics").at("train_pinball").get<double>();
    model.validation_loss = document.at("metrics").at("validation_pinball").get<double>();
    model.calibration = document.at("calibration").get<std::vector<double>>();
    if (model.calibration.size() != options.quantiles.size()) {
      return invalid_argument_error(where + ": /calibration has " + std::to_string(model.calibration.size()) +
                                    " values, expected one per quantile (" + std::to_string(options.quantiles.size()) + ")");
    }
    model.parameters = document.at("parameters").get<std::vector<float>>();
    if (model.parameters.size() != shape_of(options).parameter_count()) {
      return invalid_argument_error(where + ": /parameters has " + std::to_string(model.parameters.size()) +
                                    " values, the layout needs " + std::to_string(shape_of(options).parameter_count()));
    }
    return model;
  } catch (const json::exception& error) {
    return invalid_argument_error(where + ": invalid model file: " + json_text::describe_exception(error));
  }
}

Status save_model(const LstmModel& model, const std::filesystem::path& path) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << model_to_json(model) << '\n';
  file.close();
  if (!file) return permission_denied_error(path.string() + ": cannot write the model file");
  return {};
}

Result<LstmModel> load_model(const std::filesystem::path& path) {
  // The shared reader refuses devices and files over the size limit, and names the path.
  auto text = csv::read_text_file(path);
  if (!text.ok()) return text.status();
  return model_from_json(*text, path.string());
}

Status save_model_to_database(const LstmModel& model, const std::filesystem::path& database, std::string_view name) {
  auto db = sqlite::open(database, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, std::chrono::seconds(10),
                         "opening the model store");
  if (!db.ok()) return db.status();
  if (Status status = sqlite::exec(db->get(), database, kCreateTable, "creating the forecast_models table");
      !status.ok()) {
    return status;
  }
  auto statement = sqlite::prepare(db->get(), database,
                                   "INSERT OR REPLACE INTO forecast_models (name, format_version, training_data_hash, "
                                   "model_json) VALUES (?1, ?2, ?3, ?4)");
  if (!statement.ok()) return statement.status();
  const std::string text = model_to_json(model);
  statement->bind(1, name)
      .bind(2, std::int64_t{LstmModel::kFileVersion})
      .bind(3, std::string_view(model.training_data_hash))
      .bind(4, std::string_view(text));
  return statement->run("storing model '" + std::string(name) + "'");
}

Result<LstmModel> load_model_from_database(const std::filesystem::path& database, std::string_view name) {
  if (!std::filesystem::exists(database)) return not_found_error(database.string() + ": no such SQLite database");
  auto db = sqlite::open(database, SQLITE_OPEN_READONLY, std::chrono::seconds(10), "opening the model store");
  if (!db.ok()) return db.status();
  const std::string where = database.string() + ": forecast_models['" + std::string(name) + "']";
  auto statement = sqlite::prepare(db->get(), database, "SELECT model_json FROM forecast_models WHERE name = ?1");
  if (!statement.ok()) return not_found_error(where + ": cannot query the table: " + statement.status().message());
  statement->bind(1, name);
  auto row = statement->step("reading model '" + std::string(name) + "'");
  if (!row.ok()) return row.status();
  if (!*row) return not_found_error(where + ": no model of that name");
  return model_from_json(statement->text(0), where);
}

}  // namespace fleetcast::forecast
