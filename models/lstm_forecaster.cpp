// The LSTM behind the Forecaster interface: training on fit(), inference through the registry.
#include <optional>
#include <string>

#include "models/forecast_internal.h"

namespace fleetcast::forecast {

namespace {

// Thread-safety: fit() mutates; predict() is const and may run concurrently after fit().
class LstmForecaster final : public Forecaster {
 public:
  LstmForecaster(LstmOptions options, std::optional<LstmModel> model, const BackendRegistry& registry)
      : options_(std::move(options)), model_(std::move(model)), registry_(registry) {}

  std::string_view name() const override { return "lstm"; }

  Status fit(const TimeSeries& history) override {
    auto model = train_lstm(history, options_);
    if (!model.ok()) return model.status();
    model_ = std::move(model).value();
    return {};
  }

  Result<QuantileForecast> predict(const TimeSeries& history, int horizon) const override {
    if (!model_) return failed_precondition_error("lstm: predict() before fit(): no trained model");
    if (horizon < 1 || horizon > model_->options.horizon) {
      return invalid_argument_error("lstm: horizon " + std::to_string(horizon) + ", the model forecasts 1.." +
                                    std::to_string(model_->options.horizon) + " steps");
    }
    auto forecasts = registry_.predict(*model_, std::span(&history, 1));
    if (!forecasts.ok()) return forecasts.status();
    QuantileForecast forecast = std::move(forecasts->front());
    for (auto& row : forecast.values) row.resize(static_cast<std::size_t>(horizon));
    return forecast;
  }

 private:
  LstmOptions options_;
  std::optional<LstmModel> model_;
  const BackendRegistry& registry_;
};

}  // namespace

std::unique_ptr<Forecaster> make_lstm(LstmOptions options, const BackendRegistry& registry) {
  return std::make_unique<LstmForecaster>(std::move(options), std::nullopt, registry);
}

std::unique_ptr<Forecaster> make_lstm(LstmModel model, const BackendRegistry& registry) {
  LstmOptions options = model.options;
  return std::make_unique<LstmForecaster>(std::move(options), std::move(model), registry);
}

}  // namespace fleetcast::forecast
