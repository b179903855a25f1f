// `fleetcast forecast train|predict|eval`: trains the LSTM load forecaster on a `timestamp,value`
// series, forecasts quantiles from a saved model, and backtests the LSTM against the baselines.
// Every output names the inference backend that ran ("cuda" or "cpu", and why the CPU).
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>

#include "fleetcast/forecast.h"
#include "tools/cli/commands.h"

namespace fleetcast::cli {

namespace {

// A metric right-aligned in `width` columns: three decimals where they leave a space before them,
// else three significant digits with an exponent (an outlier of 1e15 in the test window gives a
// MASE in the 1e13s, which in fixed notation ran into the next column).
std::string metric_cell(double value, int width) {
  char text[400];
  std::snprintf(text, sizeof text, "%.3f", value);
  if (static_cast<int>(std::strlen(text)) >= width) std::snprintf(text, sizeof text, "%.3g", value);
  char cell[420];
  std::snprintf(cell, sizeof cell, "%*s", width, text);
  return cell;
}

using forecast::BackendChoice;
using forecast::BackendPreference;
using forecast::BackendRegistry;

// Usage and input mistakes exit 2; the rest (I/O, a backend failure) exit 1.
int report_error(const Status& status) {
  std::cerr << "fleetcast forecast: " << status.message() << '\n';
  return exit_code_for(status);
}

std::string describe(const BackendChoice& choice) {
  return choice.reason.empty() ? choice.name : choice.name + " (" + choice.reason + ")";
}

struct BackendFlag {
  std::string value = "auto";
  void add_to(CLI::App* command) {
    command->add_option("--backend", value, "Inference backend: auto (CUDA when a device is healthy), cpu, cuda")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
        ->capture_default_str();
  }
  [[nodiscard]] BackendPreference preference() const {
    if (value == "cpu") return BackendPreference::cpu;
    if (value == "cuda") return BackendPreference::cuda;
    return BackendPreference::automatic;
  }
};

// Where a model lives: a JSON file, or a row of a SQLite database.
struct ModelLocation {
  std::string file;
  std::string database;
  std::string name = "default";
  void add_to(CLI::App* command, const char* file_help) {
    command->add_option("--model", file, file_help);
    command->add_option("--db", database, "SQLite database holding models in table forecast_models");
    command->add_option("--name", name, "Model name in the database")->capture_default_str();
  }
  [[nodiscard]] Status check() const {
    if (file.empty() == database.empty()) return invalid_argument_error("give exactly one of --model FILE and --db DATABASE");
    return {};
  }
};

void add_lstm_options(CLI::App* command, forecast::LstmOptions& options) {
  command->add_option("--layers", options.layers, "LSTM layers (1 or 2)")->capture_default_str();
  command->add_option("--hidden", options.hidden, "Hidden units per layer")->capture_default_str();
  command->add_option("--context", options.context, "History steps read before forecasting")->capture_default_str();
  command->add_option("--horizon", options.horizon, "Steps forecast")->capture_default_str();
  command->add_option("--epochs", options.max_epochs, "Maximum training epochs")->capture_default_str();
  command->add_option("--patience", options.patience, "Early stopping patience (epochs)")->capture_default_str();
  command->add_option("--learning-rate", options.learning_rate, "Adam learning rate")->capture_default_str();
  command->add_option("--validation-fraction", options.validation_fraction,
                      "Latest share of training windows held out for early stopping")
      ->capture_default_str();
  command->add_option("--seed", options.seed, "Random seed (same seed, same weights)")
      ->check([](const std::string& seed) {
        // CLI11 would take -1 and 2^64 as 2^64 - 1: only a whole number that fits is a seed.
        const bool whole = !seed.empty() && seed.find_first_not_of("0123456789") == std::string::npos;
        const bool fits = seed.size() < 20 || (seed.size() == 20 && seed <= "18446744073709551615");
        return whole && fits ? std::string() : "expected a whole number from 0 to 18446744073709551615, found '" + seed + "'";
      })
      ->capture_default_str();
}

void print_progress(const forecast::EpochProgress& progress) {
  std::fprintf(stderr, "epoch %3d/%d  train pinball %.5f  validation pinball %.5f%s\n", progress.epoch,
               progress.max_epochs, progress.train_loss, progress.validation_loss, progress.improved ? "  *" : "");
}

void add_train(CLI::App& forecast_app, int& exit_code, FileSystem* files) {
  auto* command = forecast_app.add_subcommand("train", "Train the LSTM forecaster on a load series");
  auto series = std::make_shared<std::string>();
  auto location = std::make_shared<ModelLocation>();
  auto options = std::make_shared<forecast::LstmOptions>();
  auto quiet = std::make_shared<bool>(false);
  command->add_option("--series", *series, "timestamp,value CSV of the load history")->required();
  location->add_to(command, "Model file to write (JSON)");
  guard_file_options(command, {"--series"}, {"--model", "--db"});
  add_lstm_options(command, *options);
  command->add_flag("--quiet", *quiet, "Do not print the progress of each epoch");
  command->callback([=, &exit_code] {
    if (Status status = location->check(); !status.ok()) return void(exit_code = report_error(status));
    auto data = read_time_series_csv(*series);
    if (!data.ok()) return void(exit_code = report_error(data.status()));
    forecast::LstmOptions settings = *options;
    if (!*quiet) settings.on_epoch = print_progress;
    auto model = forecast::train_lstm(*data, settings);
    if (!model.ok()) return void(exit_code = report_error(model.status()));
    const Status saved = location->file.empty()
                             ? forecast::save_model_to_database(*model, location->database, location->name, files)
                             : forecast::save_model(*model, location->file, files);
    if (!saved.ok()) return void(exit_code = report_error(saved));
    std::cout << "trained on " << model->training_samples << " windows in " << std::fixed << std::setprecision(1)
              << model->training_seconds << " s (" << model->epochs_run << " epochs, backend cpu); validation pinball "
              << std::setprecision(5) << model->validation_loss << "; saved to "
              << (location->file.empty() ? location->database + " as '" + location->name + "'" : location->file) << '\n';
    exit_code = kExitOk;
  });
}

void add_predict(CLI::App& forecast_app, int& exit_code) {
  auto* command = forecast_app.add_subcommand("predict", "Forecast quantiles after the end of a series with a trained model");
  auto series = std::make_shared<std::string>();
  auto location = std::make_shared<ModelLocation>();
  auto backend = std::make_shared<BackendFlag>();
  auto json = std::make_shared<bool>(false);
  auto steps = std::make_shared<int>(0);
  command->add_option("--series", *series, "timestamp,value CSV: the history to forecast from")->required();
  location->add_to(command, "Model file written by 'forecast train'");
  backend->add_to(command);
  command->add_option("--steps", *steps,
                      "Steps to forecast (default: the model's horizon); more are rolled out block by block, each "
                      "block's median feeding the next and its quantiles widened by sqrt(blocks ahead), as a plan does")
      ->check(CLI::Range(1, forecast::kMaxForecastSteps));
  command->add_flag("--json", *json, "Print a JSON object instead of a table");
  command->callback([=, &exit_code] {
    if (Status status = location->check(); !status.ok()) return void(exit_code = report_error(status));
    auto model = location->file.empty() ? forecast::load_model_from_database(location->database, location->name)
                                        : forecast::load_model(location->file);
    if (!model.ok()) return void(exit_code = report_error(model.status()));
    auto data = read_time_series_csv(*series);
    if (!data.ok()) return void(exit_code = report_error(data.status()));
    const BackendRegistry registry(backend->preference());
    const int block = model->options.horizon;
    auto rolled = forecast::forecast_ahead(*forecast::make_lstm(std::move(*model), registry), *data, *steps > 0 ? *steps : block, block);
    if (!rolled.ok()) return void(exit_code = report_error(rolled.status()));
    const forecast::QuantileForecast& result = *rolled;
    // The backend that ran, and why the CPU did when it did: the registry's choice, or a CUDA call
    // that failed at run time and fell back.
    const BackendChoice ran{result.backend, result.backend == registry.choice().name ? registry.choice().reason
                                                                                     : "a CUDA call failed at run time; the CPU computed the forecast"};
    if (*json) {
      std::cout << forecast::quantile_forecast_json(result, ran);
    } else {
      std::cout << "backend: " << describe(ran) << '\n';
      if (!result.repeated_blocks.empty()) {
        std::cout << "repeated blocks:";
        for (int b : result.repeated_blocks) std::cout << ' ' << b + 1;
        std::cout << " (of " << block << " steps; each lost the history's level and repeats the first)\n";
      }
      std::cout << "timestamp";
      for (double level : result.levels) std::cout << ",p" << level * 100;
      std::cout << '\n' << std::setprecision(6);
      for (std::size_t h = 0; h < result.horizon(); ++h) {
        std::cout << result.start_seconds + static_cast<std::int64_t>(h) * result.step.count();
        for (const auto& row : result.values) std::cout << ',' << row[h];
        std::cout << '\n';
      }
    }
    exit_code = kExitOk;
  });
}

void add_eval(CLI::App& forecast_app, int& exit_code) {
  auto* command = forecast_app.add_subcommand(
      "eval", "Rolling-origin backtest: MASE, sMAPE, pinball and p10-p90 coverage of the validated forecaster (auto: chosen per series on validation origins; the planner's default is the LSTM), the LSTM and each baseline");
  auto series = std::make_shared<std::string>();
  auto options = std::make_shared<forecast::BacktestOptions>();
  auto backend = std::make_shared<BackendFlag>();
  auto json = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  command->add_option("--series", *series, "timestamp,value CSV of the load history")->required();
  command->add_option("--origins", options->origins,
                      "Forecast origins, ending at the series' end (0: as many as cover the last week)")
      ->capture_default_str();
  command->add_option("--spacing", options->origin_spacing,
                      "Steps between origins (0: a day, or the horizon when it is shorter: the windows tile the week)")
      ->capture_default_str();
  add_lstm_options(command, options->lstm);
  backend->add_to(command);
  command->add_flag("--json", *json, "Print a JSON object {\"models\": {name: metrics}}");
  command->add_flag("--quiet", *quiet, "Do not print the progress of LSTM training");
  command->callback([=, &exit_code] {
    auto data = read_time_series_csv(*series);
    if (!data.ok()) return void(exit_code = report_error(data.status()));
    forecast::BacktestOptions settings = *options;
    settings.horizon = settings.lstm.horizon;
    if (!*quiet && !*json) settings.lstm.on_epoch = print_progress;
    const BackendRegistry registry(backend->preference());
    auto report = forecast::run_backtest(*data, settings, registry);
    if (!report.ok()) return void(exit_code = report_error(report.status()));
    if (*json) {
      std::cout << forecast::backtest_report_json(*report, *series, registry.choice());
    } else {
      std::cout << "backend: " << describe(registry.choice()) << "; LSTM trained in " << std::fixed
                << std::setprecision(1) << report->lstm_training_seconds << " s on " << report->training_samples
                << " windows; tested from " << report->origins << " origins " << report->origin_spacing
                << " steps apart\n"
                << "default forecaster (auto, chosen on the data before the first origin): "
                << report->selection.explanation() << '\n';
      std::cout << std::left << std::setw(24) << "model" << std::right << std::setw(9) << "MASE" << std::setw(9)
                << "sMAPE%" << std::setw(11) << "pinball" << std::setw(11) << "p10-p90" << '\n';
      for (const auto& score : report->scores) {
        std::cout << std::left << std::setw(24) << score.model << std::right << metric_cell(score.metrics.mase, 9)
                  << metric_cell(score.metrics.smape, 9) << metric_cell(score.metrics.pinball, 11) << std::setw(10)
                  << std::setprecision(1) << 100 * score.metrics.coverage_p10_p90 << "%\n";
      }
    }
    exit_code = kExitOk;
  });
}

}  // namespace

void add_forecast_command(CLI::App& app, int& exit_code, FileSystem* files) {
  auto* command = app.add_subcommand("forecast", "Train, run and evaluate the load forecaster (LSTM and baselines)");
  command->require_subcommand(1);
  add_train(*command, exit_code, files);
  add_predict(*command, exit_code);
  add_eval(*command, exit_code);
}

}  // namespace fleetcast::cli
