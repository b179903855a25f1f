// Load forecasting: quantile forecasts of a load series from an LSTM (trained here, on the CPU)
// or from baselines (seasonal naive, Holt-Winters), the LSTM model file, the inference backend
// registry (CUDA when a healthy device is present, else CPU) and a rolling-origin backtest.
//
// Every forecast is a set of quantiles per future step (at least p10, p50, p90). The planner takes
// any Forecaster. Nothing here throws; fallible calls return Status or Result<T>, and messages
// name the file, the field, and what was expected.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fleetcast/cancellation.h"
#include "fleetcast/file_system.h"
#include "fleetcast/status.h"
#include "fleetcast/time.h"
#include "fleetcast/time_series.h"

namespace fleetcast::forecast {

/// Quantile levels every forecaster produces unless told otherwise.
inline constexpr double kDefaultQuantiles[] = {0.1, 0.5, 0.9};

/// A forecast of `horizon` steps as quantiles. Value type; thread-safety: none needed.
struct QuantileForecast {
  std::int64_t start_seconds = 0;        // time of the first forecast step (same origin as the series)
  Seconds step{0};
  std::vector<double> levels;            // ascending quantile levels in (0, 1), e.g. 0.1 0.5 0.9
  std::vector<std::vector<double>> values;  // values[q][h]: quantile levels[q] at step h; non-decreasing in q
  std::string model;                     // "lstm", "seasonal_naive", "holt_winters", ...
  std::string backend;                   // what computed it: "cpu" or "cuda"
  /// The blocks of forecast_ahead (0-based; never 0, the first) that lost the history's level and
  /// repeat the first block instead; empty for any other forecast.
  std::vector<int> repeated_blocks;

  [[nodiscard]] std::size_t horizon() const { return values.empty() ? 0 : values.front().size(); }
  /// The row of the level closest to `level` (levels is never empty in a produced forecast).
  [[nodiscard]] const std::vector<double>& quantile(double level) const;
};

/// Progress of LSTM training, reported once per epoch through TrainingOptions::on_epoch.
struct EpochProgress {
  int epoch = 0;                   // 1-based
  int max_epochs = 0;
  double train_loss = 0;           // mean pinball loss over the epoch's batches (scaled units)
  double validation_loss = 0;      // mean pinball loss on the validation windows (scaled units)
  bool improved = false;           // the best validation loss so far
};

/// Settings of the LSTM and of its training. The defaults are the settings the project evaluates
/// with; they are not tuned to one series.
struct LstmOptions {
  int layers = 1;                  // 1 or 2
  int hidden = 32;                 // 8..256 (32..128 in practice)
  int context = 96;                // history steps the network reads before forecasting, 1..1,000,000
  int horizon = 48;                // steps it forecasts, 1..1,000,000
  std::vector<double> quantiles = {0.1, 0.5, 0.9};  // ascending, in (0, 1), must contain 0.5
  int max_epochs = 60;
  int patience = 8;                // epochs without validation improvement before stopping
  int batch_size = 64;
  double learning_rate = 3e-3;     // Adam
  double gradient_clip = 1.0;      // maximum global L2 norm of a batch gradient
  double validation_fraction = 0.2;  // the latest share of training windows held out for early stopping
  std::uint64_t seed = 42;         // same seed, same data -> same weights, bit for bit
  /// Called after every epoch (the library never prints). May be empty.
  std::function<void(const EpochProgress&)> on_epoch;
  /// Checked before every epoch: training cancelled from another thread returns
  /// StatusCode::cancelled (a server's time limit, a shutdown). Not owned; may be null. Neither
  /// it nor on_epoch is kept in the trained model.
  const CancellationToken* cancellation = nullptr;
};

/// Per-series scaling of the LSTM's inputs and outputs: scaled = (value - level) / scale, where
/// each window's level is the mean of its last `level_steps` history values (so the network is
/// level-invariant and carries over to levels it never saw) and `scale` is the training series'
/// in-sample mean absolute daily change (so the scaled pinball loss reads like MASE), at least a
/// tenth of its standard deviation (so that a series repeating almost exactly every day does not
/// scale its windows into the hundreds). Fitted on the training series and saved with the model.
///
/// The interval spread of a window follows its recent volatility: with `recent` the mean absolute
/// step-to-step change over its last `change_steps` history values, every quantile's distance from
/// the median is multiplied by sqrt(recent / step_change), clamped to [1/3, 3] (the geometric mean
/// of the local and the series-wide volatility, so a flat half-day never collapses the interval
/// and one jump never makes it unbounded).
struct Scaler {
  double scale = 1;                // > 0, in the series' units
  int level_steps = 24;            // >= 1, one day of steps
  double step_change = 1;          // > 0: the training series' mean absolute step-to-step change
  int change_steps = 12;           // >= 1, half a day of steps
};

/// A trained LSTM forecaster: options, scaler, float32 parameters in the layout contract of
/// models/lstm_layout.h, and provenance. Value type.
struct LstmModel {
  /// 2: the scaler's step_change and change_steps (interval spread by recent volatility).
  static constexpr int kFileVersion = 2;

  LstmOptions options;             // on_epoch is not saved
  Scaler scaler;
  std::int64_t step_seconds = 0;   // step of the training series; predictions need the same step
  int season = 24;                 // steps per day at that step
  std::vector<float> parameters;
  /// Per quantile, a factor on its distance from the median, applied with the window's interval
  /// spread (see Scaler): each symmetric pair of levels (p10, p90) is widened or narrowed about
  /// the median so that it covers its nominal share of the training and validation windows
  /// (conformal calibration on the whole training span); the median's factor is 1.
  std::vector<double> calibration;
  std::string training_data_hash;  // "fnv1a64:<16 hex digits>" of the training series
  std::size_t training_samples = 0;
  /// One step past the training series' last sample, in that series' clock (TimeSeries
  /// start_seconds): what a backtest checks against its cut. nullopt in model files written before
  /// it was recorded (the field is optional in version 2).
  std::optional<std::int64_t> trained_until_seconds;
  int epochs_run = 0;
  double train_loss = 0;           // best epoch's training pinball loss (scaled units)
  double validation_loss = 0;      // best validation pinball loss (scaled units)
  double training_seconds = 0;     // wall time of training, informative only
};

/// Trains an LSTM on `series` (hourly or any constant step). Needs at least
/// season + context + horizon + a few windows of data; errors say how many samples are needed.
/// Deterministic for a given seed. Thread-safety: reentrant.
Result<LstmModel> train_lstm(const TimeSeries& series, const LstmOptions& options);

/// The model as versioned JSON text, and back. Loading checks the format, version, layout and
/// parameter count; `source` names the file or row in messages.
std::string model_to_json(const LstmModel& model);
Result<LstmModel> model_from_json(std::string_view text, std::string_view source);

/// Writes the model file atomically (write_file_atomically): `path` keeps its previous content
/// when any step fails. `file_system`: where the writes go (nullptr: the real disk).
Status save_model(const LstmModel& model, const std::filesystem::path& path, FileSystem* file_system = nullptr);
Result<LstmModel> load_model(const std::filesystem::path& path);
/// Stores the model under `name` in table `forecast_models` of the SQLite database at `database`
/// (created, with the table, if missing; an existing name is replaced), in one transaction.
Status save_model_to_database(const LstmModel& model, const std::filesystem::path& database, std::string_view name,
                              FileSystem* file_system = nullptr);
Result<LstmModel> load_model_from_database(const std::filesystem::path& database, std::string_view name);

/// Which inference backend to use for the LSTM.
enum class BackendPreference { automatic, cpu, cuda };

/// The backend a registry chose, and why the CPU was chosen when it was.
struct BackendChoice {
  std::string name;                // "cuda" or "cpu"
  std::string reason;              // empty when the preferred backend runs; else why not
};

/// Batched LSTM inference over the registered backends: CPU (Eigen, always present) and CUDA
/// (when the library was built with it, a device is present, and a small batch run on both
/// backends agrees within 1e-4; otherwise the choice's reason says which check failed). The caller
/// owns the registry; probing and the self-check happen once, in the constructor. A CUDA failure at run time falls back to
/// the CPU for that call and is reported in the call's BackendChoice.
/// Thread-safety: const member functions may be called concurrently.
class BackendRegistry {
 public:
  explicit BackendRegistry(BackendPreference preference = BackendPreference::automatic);
  ~BackendRegistry();
  BackendRegistry(BackendRegistry&&) noexcept;
  BackendRegistry& operator=(BackendRegistry&&) noexcept;
  BackendRegistry(const BackendRegistry&) = delete;
  BackendRegistry& operator=(const BackendRegistry&) = delete;

  /// The backend predictions will use, and why the CPU was chosen if it was.
  [[nodiscard]] const BackendChoice& choice() const;
  /// Names of the backends compiled into this build ("cpu", and "cuda" when built with CUDA).
  [[nodiscard]] std::vector<std::string> compiled_backends() const;

  /// Forecasts model.options.horizon steps after the end of each history (each needs at least
  /// season + context samples, at the model's step, finite). `ran` (optional) receives the
  /// backend that computed the batch.
  Result<std::vector<QuantileForecast>> predict(const LstmModel& model, std::span<const TimeSeries> histories,
                                                BackendChoice* ran = nullptr) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The most steps one forecast holds (Forecaster::predict, forecast_ahead, `forecast predict
/// --steps`): a million steps of each quantile, tens of megabytes; more is a mistake, not a plan.
inline constexpr int kMaxForecastSteps = 1'000'000;

/// A forecasting method: fit on a history, then forecast from the end of a history.
/// Thread-safety: fit() mutates; after it, predict() may be called concurrently.
class Forecaster {
 public:
  virtual ~Forecaster() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  /// Learns from `history` (baselines keep only settings; the LSTM trains).
  virtual Status fit(const TimeSeries& history) = 0;
  /// Forecasts `horizon` steps after the end of `history` (1 to kMaxForecastSteps; at most the
  /// trained horizon for the LSTM).
  [[nodiscard]] virtual Result<QuantileForecast> predict(const TimeSeries& history, int horizon) const = 0;
};

/// Forecasts `steps` steps after the end of `history` with a fitted `forecaster`, in blocks of at
/// most `block` steps (an LSTM forecasts at most its trained horizon at once; `block` >= steps
/// forecasts in one call): each block's median is appended to the history the next block starts
/// from, and the next block's quantiles' distance from its median is widened by sqrt(blocks ahead),
/// as errors compound over blocks; values below 0 are raised to 0. A roll-out can lose the level
/// its history set (on bursty load the LSTM's medians, fed back, decayed to 0 within days while the
/// load held): a later block whose mean over its quantiles falls below half the lowest mean of any
/// `block`-long window of the history's last week repeats the first block at the same times of day
/// (when the first block holds a whole day; listed in repeated_blocks). The model and backend are
/// the first block's. invalid_argument when `steps` or `block` is below 1; else the forecaster's
/// errors.
Result<QuantileForecast> forecast_ahead(const Forecaster& forecaster, TimeSeries history, int steps, int block);

/// The mean p90 - p10 of each block of `block` steps of `forecast` (the last block may be
/// shorter), in the forecast's units, the nearest levels standing for p10 and p90: how wide
/// forecast_ahead's blocks came out. Empty when `block` < 1 or the forecast has no step.
std::vector<double> mean_band_width_per_block(const QuantileForecast& forecast, int block);

/// Seasonal naive: each step repeats the value one season earlier (daily: 1 day, weekly: 7 days);
/// quantiles from the spread of the in-sample seasonal differences, widening with the number of
/// seasons ahead.
enum class Seasonality { daily, weekly };
std::unique_ptr<Forecaster> make_seasonal_naive(Seasonality seasonality);
/// Holt-Winters with additive trend and additive daily seasonality; smoothing parameters chosen by
/// in-sample one-step squared error on a grid; normal quantiles from the ETS(A,A,A) variance.
std::unique_ptr<Forecaster> make_holt_winters();
/// The LSTM: fit() trains with `options`; predict() runs on `registry` (which must outlive it).
std::unique_ptr<Forecaster> make_lstm(LstmOptions options, const BackendRegistry& registry);
/// An LSTM forecaster around an already trained model.
std::unique_ptr<Forecaster> make_lstm(LstmModel model, const BackendRegistry& registry);

/// Settings of the default forecaster, "auto": it chooses among the LSTM, seasonal naive (daily
/// and weekly), Holt-Winters and the means of the two and three best of them by a rolling-origin backtest on
/// the training span, and calibrates its p10/p90 on that backtest's out-of-sample errors.
struct AutoOptions {
  /// The LSTM candidate's settings; lstm.horizon is the validation horizon and the most steps one
  /// predict() forecasts.
  LstmOptions lstm;
  /// At most (with a horizon under a day and no origin_spacing, the days the origins span); fewer
  /// (>= 3) when the span is short for the weekly member. More origins calibrate on
  /// more errors but leave the LSTM candidate less of the span to train on: on the 24 hourly
  /// series/cuts of tools/bench/forecast_calibration.sh, 10 gave 7% less pinball loss than 14.
  int validation_origins = 10;
  /// Steps between validation origins; 0: one day of steps when the horizon is at least a day,
  /// else the horizon: the windows then tile the last validation_origins days (at 5-minute steps,
  /// 48 steps ahead: 60 windows of 4 hours) and hold every time of day, as the held-out week is
  /// tested, at most six windows a day.
  int origin_spacing = 0;
  int horizon_bands = 4;           // calibration bands over the horizon's steps (>= 1, <= horizon)
  bool include_lstm = true;        // false: the baselines and their ensemble only (no training)
  /// LSTM models trained in validation, one per fold of consecutive origins, each on the span
  /// before its fold's first origin (>= 1; at most one per origin).
  int lstm_folds = 2;
};

/// One candidate of the auto forecaster on the validation origins of the training span, with its
/// own intervals (before calibration).
struct CandidateScore {
  std::string model;
  bool available = false;
  std::string unavailable_reason;  // why not, when !available (e.g. too short a history)
  double mase = 0;                 // validation MASE of the median (the choice's criterion)
  double pinball = 0;
  double coverage_p10_p90 = 0;
};

/// What the auto forecaster chose on a training span, and its calibration. Value type.
struct ForecasterSelection {
  std::string chosen;              // a candidate's name, or "ensemble(a+b)", "ensemble(a+b+c)"
  std::vector<std::string> members;  // the models whose medians are averaged (one for a single model)
  std::vector<CandidateScore> candidates;  // every candidate, the ensembles last
  int origins = 0;                 // validation origins used, the last one `horizon` steps before the span's end
  int origin_spacing = 0;          // steps between them
  int horizon = 0;                 // steps forecast from each; the most one predict() gives
  std::vector<double> levels;      // quantile levels of the forecasts (p10, p50, p90)
  /// Calibration: the forecast at level q and step h (0-based) is the median plus
  /// offsets[b][q] x d, b = h * offsets.size() / horizon, d the history's mean absolute
  /// day-over-day change over its last week: offsets[b][q] is the empirical quantile at |2q - 1|
  /// (finite-sample conformal rank) of the chosen model's absolute validation errors
  /// |actual - median| in band b, each divided by d at its origin, negated for q < 0.5 (so the
  /// interval is symmetric about the median and follows the recent volatility).
  /// d is never taken below `span_change`, d at the end of the training span: a history that
  /// ends in forecast medians (the planner's block-by-block roll-out) is no evidence of calm.
  std::vector<std::vector<double>> offsets;
  double span_change = 0;          // d at the end of the training span, in the series' units
  double calibrated_coverage = 0;  // share of the validation actuals inside the calibrated p10-p90
  bool nonnegative = false;        // the span has no negative value: quantiles are clamped at 0
  std::optional<LstmModel> lstm;   // the LSTM member (when chosen), trained on the whole span
  /// One line: what was chosen, on what validation, each candidate's MASE, the calibration.
  [[nodiscard]] std::string explanation() const;
};

/// Runs the validation backtest on `training` (and nothing after it): every candidate forecasts
/// `options.lstm.horizon` steps from each validation origin; the LSTM is trained once per fold of
/// origins on the data before the fold (options.lstm_folds), and once more on the whole span when
/// it is chosen or an ensemble's member (its validation errors, of younger models, calibrate it).
/// Chooses the single candidate of lowest validation MASE (ties: the earlier: lstm, holt_winters,
/// seasonal_naive_weekly, seasonal_naive), or the ensemble of lowest MASE when that is at least 5%
/// lower, and calibrates it. The weekly member sits out (unavailable, the reason says why) a span
/// of two weeks or more that shows no weekly pattern: its week-ago values predict it no better
/// than its day-ago values, by mean absolute error over the same steps.
/// Deterministic for options.lstm.seed. Errors when the span is too short for three origins of
/// Holt-Winters (three days of history before the first). Thread-safety: reentrant.
Result<ForecasterSelection> select_forecaster(const TimeSeries& training, const AutoOptions& options,
                                              const BackendRegistry& registry);
/// The forecaster a selection describes (name "auto"); its forecasts' model is "auto(CHOSEN)".
/// predict() gives at most selection.horizon steps. `registry` must outlive it.
std::unique_ptr<Forecaster> make_selected(ForecasterSelection selection, const BackendRegistry& registry);
/// The auto forecaster: fit() runs select_forecaster on the history.
std::unique_ptr<Forecaster> make_auto(AutoOptions options, const BackendRegistry& registry);

/// Accuracy of one model over a backtest. MASE scales by the in-sample MAE of the daily seasonal
/// naive forecast; sMAPE (in percent) and MASE use the p50; pinball is the mean over the quantiles
/// (in the series' units); coverage is the share of actuals inside [p10, p90].
struct ForecastMetrics {
  double mase = 0;
  double smape = 0;
  double pinball = 0;
  double coverage_p10_p90 = 0;
  std::size_t points = 0;          // forecast steps scored
};

struct BacktestOptions {
  int horizon = 48;
  /// Forecast origins, one per `origin_spacing` steps, the last window ending at the series' end;
  /// 0: as many as cover the last week (7 a day apart for a horizon of a day or more).
  int origins = 0;
  /// Steps between origins; 0: a day of steps when the horizon is at least a day, else the
  /// horizon, so that the windows tile the week and hold every time of day (at 5-minute steps, 48
  /// steps ahead: 42 windows of 4 hours), at most six windows a day.
  int origin_spacing = 0;
  LstmOptions lstm;                // the LSTM is trained once on the data before the first origin
};

struct ModelScore {
  std::string model;
  std::string backend;             // "cpu"/"cuda" for the LSTM, "cpu" for the baselines
  ForecastMetrics metrics;
};

struct BacktestReport {
  std::vector<ModelScore> scores;  // auto, lstm, seasonal_naive, seasonal_naive_weekly, holt_winters
  ForecasterSelection selection;   // what auto chose on the data before the first origin, and why
  int origins = 0;                 // the origins tested (the options' or their defaults)
  int origin_spacing = 0;          // steps between them
  std::size_t training_samples = 0;
  double lstm_training_seconds = 0;
};

/// Rolling-origin backtest of the default forecaster (auto, selected and calibrated on the data
/// before the first origin only), the LSTM and each baseline on one series. Refuses a series too short
/// for the requested origins and the LSTM's context. Thread-safety: reentrant.
Result<BacktestReport> run_backtest(const TimeSeries& series, const BacktestOptions& options,
                                    const BackendRegistry& registry);

/// A forecast as the JSON `fleetcast forecast predict --json` prints: {"model": "lstm", "backend":
/// {"name", "reason"}, "steps": [{"timestamp" (epoch seconds), "quantiles": {"p10": ..., ...}}]},
/// and "repeated_blocks" (forecast_ahead's, numbered from 0) where there are any.
std::string quantile_forecast_json(const QuantileForecast& forecast, const BackendChoice& backend);

/// That document back, as a forecast made elsewhere (a team's own model, a study's oracle) that a
/// plan takes in place of its forecaster (PlanOptions::supplied_forecasts). "model" is optional
/// ("supplied" when absent) and "backend" is ignored; every step has the same "p<percent>" levels,
/// the median "p50" among them, finite values >= 0 that do not decrease with the level; at least
/// two steps, their timestamps strictly increasing at one constant step. backend is "supplied".
/// invalid_argument naming `source`, the JSON pointer and what was expected.
Result<QuantileForecast> quantile_forecast_from_json(std::string_view text, std::string_view source);
/// Reads the file at `path` as quantile_forecast_from_json does.
Result<QuantileForecast> load_quantile_forecast(const std::filesystem::path& path);

/// ok when `forecast`, a value built in code, is what the reader above would return: a positive
/// step, levels strictly ascending in (0, 1) with 0.5 among them, one row of values per level,
/// every row as long as the first (at least one step), finite values >= 0 that do not decrease
/// with the level, and every step's time within the years 0000-9999. invalid_argument naming the
/// first level or step that is not, so that a plan never reads past a short row.
Status check_quantile_forecast(const QuantileForecast& forecast);

/// A backtest as the JSON `fleetcast forecast eval --json` prints: {"series", "backend",
/// "lstm_training_seconds", "test": {"origins", "origin_spacing"}, "models": {name: {"mase",
/// "smape", "pinball", "coverage_p10_p90", "points", "backend"}}, "selection": {"chosen",
/// "members", "why", "validation": {"origins", "origin_spacing", "horizon"}, "candidates": {name:
/// {"mase", "pinball", "coverage_p10_p90"} or {"unavailable": why}}, "levels", "offsets"
/// [band][level], "calibrated_coverage"}}; `series` names the history (its file).
std::string backtest_report_json(const BacktestReport& report, std::string_view series, const BackendChoice& backend);

/// Scores forecasts against actuals. `actuals[i]` are the values at the steps of `forecasts[i]`;
/// `scale` is the MASE denominator (> 0).
ForecastMetrics score_forecasts(std::span<const QuantileForecast> forecasts,
                                std::span<const std::vector<double>> actuals, double scale);

/// "fnv1a64:<hex>" of a series' start, step and values (bit patterns), for model provenance.
std::string series_hash(const TimeSeries& series);

/// Checks that a series can be used for forecasting: at least `min_samples` values, a positive
/// step, all values finite. Errors start with `what`, say what is wrong and how many samples are
/// needed, followed by `why` in parentheses when it is not empty.
Status check_series(const TimeSeries& series, std::size_t min_samples, std::string_view what,
                    std::string_view why = {});

}  // namespace fleetcast::forecast
