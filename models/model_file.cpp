// The versioned LSTM model file: JSON with the layout contract, options, scaler, provenance,
// metrics and the float32 parameters; on disk or as a row of the SQLite table forecast_models.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/csv.h"
#include "core/json_text.h"
#include "core/sqlite.h"
#include "fleetcast/time_series.h"
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

// A member that is not what the model file needs, with its JSON pointer; thrown by the readers
// below and turned into an error value by model_from_json, as nlohmann's own exceptions are.
struct BadMember {
  std::string message;
};

// The integer member `key` of `object`, exactly: a JSON integer that fits T. nlohmann's get<int>()
// would convert 1e300 (undefined behaviour), 1.7 (to 1) or -1 for an unsigned T (wrapping).
template <typename T>
T integer_member(const json& object, const char* key, std::string_view pointer) {
  const json& value = object.at(key);
  bool fits = false;
  if (value.is_number_unsigned()) {
    fits = value.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
  } else if (value.is_number_integer()) {
    const std::int64_t x = value.get<std::int64_t>();
    fits = x >= 0 ? static_cast<std::uint64_t>(x) <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())
                  : std::numeric_limits<T>::is_signed && x >= static_cast<std::int64_t>(std::numeric_limits<T>::min());
  }
  if (!fits) {
    throw BadMember{std::string(pointer) + "/" + key + ": expected an integer from " +
                    std::to_string(std::numeric_limits<T>::min()) + " to " +
                    std::to_string(std::numeric_limits<T>::max()) + ", found " + value.dump()};
  }
  return value.is_number_unsigned() ? static_cast<T>(value.get<std::uint64_t>()) : static_cast<T>(value.get<std::int64_t>());
}

// The parameters as float32, each within float's range (a double beyond it would become an
// infinity, or be undefined behaviour to convert).
std::vector<float> float_parameters(const json& array) {
  std::vector<float> values;
  if (!array.is_array()) throw BadMember{"/parameters: expected an array of numbers, found " + std::string(array.type_name())};
  values.reserve(array.size());
  for (std::size_t i = 0; i < array.size(); ++i) {
    const json& element = array[i];
    if (!element.is_number() || !(std::abs(element.get<double>()) <= std::numeric_limits<float>::max())) {
      throw BadMember{"/parameters/" + std::to_string(i) + ": expected a float32 number, found " + element.dump()};
    }
    values.push_back(static_cast<float>(element.get<double>()));
  }
  return values;
}

constexpr const char* kCreateTable =
    "CREATE TABLE IF NOT EXISTS forecast_models ("
    " name TEXT PRIMARY KEY,"
    " format_version INTEGER NOT NULL,"
    " training_data_hash TEXT NOT NULL,"
    " model_json TEXT NOT NULL)";

// Provenance; "until_seconds" only when known (an optional member of version 2, so files written
// before it load unchanged).
json training_json(const LstmModel& model) {
  json training = {{"data_hash", model.training_data_hash}, {"samples", model.training_samples}};
  if (model.trained_until_seconds) training["until_seconds"] = *model.trained_until_seconds;
  training["epochs_run"] = model.epochs_run;
  training["seconds"] = model.training_seconds;
  return training;
}

// The training options of /options, as written (the caller checks them).
LstmOptions options_of(const json& o) {
  LstmOptions options;
  options.layers = integer_member<int>(o, "layers", "/options");
  options.hidden = integer_member<int>(o, "hidden", "/options");
  options.context = integer_member<int>(o, "context", "/options");
  options.horizon = integer_member<int>(o, "horizon", "/options");
  options.quantiles = o.at("quantiles").get<std::vector<double>>();
  options.max_epochs = integer_member<int>(o, "max_epochs", "/options");
  options.patience = integer_member<int>(o, "patience", "/options");
  options.batch_size = integer_member<int>(o, "batch_size", "/options");
  options.learning_rate = o.at("learning_rate").get<double>();
  options.gradient_clip = o.at("gradient_clip").get<double>();
  options.validation_fraction = o.at("validation_fraction").get<double>();
  options.seed = integer_member<std::uint64_t>(o, "seed", "/options");
  return options;
}

// The scaler's member `key`, in the series' units: positive, and at most a load series' largest
// magnitude (kMaxSeriesMagnitude), as a scaler fitted to one is; a larger one would make every
// forecast infinite.
double series_magnitude(const json& scaler, const char* key) {
  const json& value = scaler.at(key);
  if (!value.is_number() || !(value.get<double>() > 0 && value.get<double>() <= kMaxSeriesMagnitude)) {
    throw BadMember{std::string("/scaler/") + key + ": expected a positive number at most 1e15 (the series' units), found " +
                    value.dump()};
  }
  return value.get<double>();
}

// /series and /scaler into `model`, each a positive number.
void read_series_and_scaler(const json& document, LstmModel& model) {
  const json& scaler = document.at("scaler");
  model.step_seconds = integer_member<std::int64_t>(document.at("series"), "step_seconds", "/series");
  model.season = integer_member<int>(document.at("series"), "season_steps", "/series");
  model.scaler.scale = series_magnitude(scaler, "scale");
  model.scaler.level_steps = integer_member<int>(scaler, "level_steps", "/scaler");
  model.scaler.step_change = series_magnitude(scaler, "step_change");
  model.scaler.change_steps = integer_member<int>(scaler, "change_steps", "/scaler");
  if (model.step_seconds <= 0 || model.season < 1 || model.scaler.level_steps < 1 || model.scaler.change_steps < 1) {
    throw BadMember{"/series or /scaler: expected a positive step_seconds, season_steps, level_steps and change_steps"};
  }
}

// The number member `key` of `object`, or a BadMember naming its pointer (nlohmann's own error
// names neither the member nor where it is).
double number_member(const json& object, const char* key, std::string_view pointer) {
  const json& value = object.at(key);
  if (!value.is_number()) {
    throw BadMember{std::string(pointer) + "/" + key + ": expected a number, found " + value.dump()};
  }
  return value.get<double>();
}

// /calibration: one factor per quantile, each from 0 to kMaxCalibrationFactor as training makes it.
std::vector<double> calibration_factors(const json& array, std::size_t quantiles) {
  std::vector<double> factors = array.get<std::vector<double>>();
  if (factors.size() != quantiles) {
    throw BadMember{"/calibration has " + std::to_string(factors.size()) + " values, expected one per quantile (" +
                    std::to_string(quantiles) + ")"};
  }
  for (std::size_t q = 0; q < factors.size(); ++q) {
    if (!(factors[q] >= 0 && factors[q] <= kMaxCalibrationFactor)) {
      throw BadMember{"/calibration/" + std::to_string(q) + ": expected a factor from 0 to " +
                      json(kMaxCalibrationFactor).dump() + ", found " + array[q].dump()};
    }
  }
  return factors;
}

// /training (what the model was trained on, and how long) and /metrics into `model`.
void read_provenance(const json& document, LstmModel& model) {
  const json& training = document.at("training");
  model.training_data_hash = training.at("data_hash").get<std::string>();
  model.training_samples = integer_member<std::size_t>(training, "samples", "/training");
  if (training.contains("until_seconds")) {
    model.trained_until_seconds = integer_member<std::int64_t>(training, "until_seconds", "/training");
  }
  model.epochs_run = integer_member<int>(training, "epochs_run", "/training");
  model.training_seconds = number_member(training, "seconds", "/training");
  model.train_loss = number_member(document.at("metrics"), "train_pinball", "/metrics");
  model.validation_loss = number_member(document.at("metrics"), "validation_pinball", "/metrics");
}

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
      {"training", training_json(model)},
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
    const int version = integer_member<int>(document, "version", "");
    if (version != LstmModel::kFileVersion) {
      return invalid_argument_error(where + ": model file version " + std::to_string(version) +
                                    ", this build reads version " + std::to_string(LstmModel::kFileVersion) +
                                    (version < 2 ? " (retrain the model: version 2 added the scaler's interval spread)" : ""));
    }
    LstmModel model;
    model.options = options_of(document.at("options"));
    const LstmOptions& options = model.options;
    if (Status status = check_lstm_options(options); !status.ok()) return status.with_context(where + ": /options");
    if (document.at("layout") != layout_json(shape_of(options))) {
      return invalid_argument_error(where + ": /layout " + document.at("layout").dump() +
                                    " does not match this build's contract " + layout_json(shape_of(options)).dump());
    }
    read_series_and_scaler(document, model);
    read_provenance(document, model);
    model.calibration = calibration_factors(document.at("calibration"), options.quantiles.size());
    model.parameters = float_parameters(document.at("parameters"));
    if (model.parameters.size() != shape_of(options).parameter_count()) {
      return invalid_argument_error(where + ": /parameters has " + std::to_string(model.parameters.size()) +
                                    " values, the layout needs " + std::to_string(shape_of(options).parameter_count()));
    }
    return model;
  } catch (const json::exception& error) {
    return invalid_argument_error(where + ": invalid model file: " + json_text::describe_exception(error));
  } catch (const BadMember& bad) {
    return invalid_argument_error(where + ": invalid model file: " + bad.message);
  }
}

Status save_model(const LstmModel& model, const std::filesystem::path& path, FileSystem* file_system) {
  return write_file_atomically(path, model_to_json(model) + '\n', file_system);
}

Result<LstmModel> load_model(const std::filesystem::path& path) {
  // The shared reader refuses devices and files over the size limit, and names the path.
  auto text = csv::read_text_file(path);
  if (!text.ok()) return text.status();
  return model_from_json(*text, path.string());
}

namespace {

// A model store holds forecast_models alone (or nothing yet): a price catalog, a batch results
// database or another application's must not gain a table, nor be switched to WAL, by a save.
Status refuse_other_database(sqlite3* db, const std::filesystem::path& file) {
  Result<std::string> names = sqlite::other_table_names(db, file, "forecast_models");
  if (!names.ok()) return names.status();
  if (names->empty()) return {};
  return failed_precondition_error(file.string() + ": not a model store (it holds tables " + *names +
                                   "); choose another database file");
}

}  // namespace

Status save_model_to_database(const LstmModel& model, const std::filesystem::path& database, std::string_view name,
                              FileSystem* file_system) {
  auto db = sqlite::open(database, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, std::chrono::seconds(10),
                         "opening the model store", file_system);
  if (!db.ok()) return db.status();
  if (Status status = refuse_other_database(db->get(), database); !status.ok()) return status;
  // WAL, as the other databases: a save that fails part-way leaves frames readers ignore, where a
  // rollback journal would stay hot and refuse read-only openers (forecast predict) until the next
  // save.
  if (Status status = sqlite::exec(db->get(), database, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL",
                                   "setting up the model store");
      !status.ok()) {
    return status;
  }
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
