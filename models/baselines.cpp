// The baselines: seasonal naive (daily or weekly) and additive Holt-Winters. Always available,
// cheap, and the bar the LSTM has to clear in the backtest.
#include <cmath>
#include <limits>
#include <string>

#include "models/forecast_internal.h"

namespace fleetcast::forecast {

namespace {

// Quantiles point + z(level) * sigma_h around a point forecast, the normal prediction interval
// of both baselines; `sigma(h)` is the standard deviation at step h (1-based).
template <typename Point, typename Sigma>
QuantileForecast normal_forecast(const TimeSeries& history, int horizon, std::string model, Point point,
                                 Sigma sigma) {
  QuantileForecast forecast = empty_forecast(history, kDefaultQuantiles, horizon, std::move(model), "cpu");
  for (std::size_t q = 0; q < forecast.levels.size(); ++q) {
    const double z = normal_quantile(forecast.levels[q]);
    for (int h = 1; h <= horizon; ++h) {
      forecast.values[q][static_cast<std::size_t>(h - 1)] = point(h) + z * sigma(h);
    }
  }
  return forecast;
}

Status check_horizon(int horizon) {
  if (horizon < 1 || horizon > kMaxForecastSteps) {
    return invalid_argument_error("forecast horizon is " + std::to_string(horizon) + ", expected 1 to " + std::to_string(kMaxForecastSteps));
  }
  return {};
}

// Thread-safety: stateless after construction; predict() is const and reentrant.
class SeasonalNaive final : public Forecaster {
 public:
  explicit SeasonalNaive(Seasonality seasonality) : seasonality_(seasonality) {}

  std::string_view name() const override {
    return seasonality_ == Seasonality::daily ? "seasonal_naive" : "seasonal_naive_weekly";
  }
  Status fit(const TimeSeries& history) override { return check_series(history, 1, std::string(name())); }

  Result<QuantileForecast> predict(const TimeSeries& history, int horizon) const override {
    if (Status status = check_horizon(horizon); !status.ok()) return status;
    const auto period = static_cast<std::size_t>(steps_per_day(history.step) *
                                                 (seasonality_ == Seasonality::daily ? 1 : 7));
    if (Status status = check_series(history, period + 2, std::string(name()),
                                     "one season of " + std::to_string(period) + " steps and two residuals");
        !status.ok()) {
      return status;
    }
    const std::vector<double>& y = history.values;
    const std::size_t n = y.size();
    double squares = 0;
    for (std::size_t t = period; t < n; ++t) squares += (y[t] - y[t - period]) * (y[t] - y[t - period]);
    const double sigma = std::sqrt(squares / static_cast<double>(n - period));
    const auto seasons_ahead = [period](int h) { return static_cast<std::size_t>(h - 1) / period + 1; };
    return normal_forecast(
        history, horizon, std::string(name()),
        [&](int h) { return y[n - 1 + static_cast<std::size_t>(h) - period * seasons_ahead(h)]; },
        [&](int h) { return sigma * std::sqrt(static_cast<double>(seasons_ahead(h))); });
  }

 private:
  Seasonality seasonality_;
};

// Holt-Winters in error-correction (ETS(A,A,A)) form, so that the smoothing parameters are those
// of the closed-form forecast variance.
struct HoltWintersFit {
  double alpha = 0, beta = 0, gamma = 0;
  double level = 0, trend = 0;
  std::vector<double> seasonal;  // seasonal[t % m] after the last observation
  double sigma = 0;              // standard deviation of the one-step errors
  double sse = std::numeric_limits<double>::infinity();
};

HoltWintersFit run_holt_winters(const std::vector<double>& y, std::size_t m, double alpha, double beta, double gamma) {
  HoltWintersFit fit{alpha, beta, gamma, 0, 0, std::vector<double>(m), 0, 0};
  double first_mean = 0, second_mean = 0;
  for (std::size_t i = 0; i < m; ++i) first_mean += y[i] / static_cast<double>(m);
  for (std::size_t i = m; i < 2 * m; ++i) second_mean += y[i] / static_cast<double>(m);
  fit.level = first_mean;
  fit.trend = (second_mean - first_mean) / static_cast<double>(m);
  // The first season's mean is the level at its middle; the seasonal terms are what the trend line
  // through it leaves, and the level starts at the season's last step.
  const double middle = static_cast<double>(m - 1) / 2;
  for (std::size_t i = 0; i < m; ++i) {
    fit.seasonal[i] = y[i] - (first_mean + fit.trend * (static_cast<double>(i) - middle));
  }
  fit.level += fit.trend * middle;
  double squares = 0;
  for (std::size_t t = m; t < y.size(); ++t) {
    double& season = fit.seasonal[t % m];
    const double error = y[t] - (fit.level + fit.trend + season);
    fit.level += fit.trend + alpha * error;
    fit.trend += beta * error;
    season += gamma * error;
    squares += error * error;
  }
  fit.sse = squares;
  fit.sigma = std::sqrt(squares / static_cast<double>(y.size() - m));
  return fit;
}

// Thread-safety: stateless after construction; predict() is const and reentrant.
class HoltWinters final : public Forecaster {
 public:
  std::string_view name() const override { return "holt_winters"; }
  Status fit(const TimeSeries& history) override { return check_series(history, 1, "holt_winters"); }

  Result<QuantileForecast> predict(const TimeSeries& history, int horizon) const override {
    if (Status status = check_horizon(horizon); !status.ok()) return status;
    const auto m = static_cast<std::size_t>(steps_per_day(history.step));
    if (Status status = check_series(history, 3 * m, "holt_winters", "three seasons of " + std::to_string(m) + " steps");
        !status.ok()) {
      return status;
    }
    HoltWintersFit best;
    for (double alpha : {0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9}) {
      for (double beta : {0.0, 0.001, 0.01}) {
        for (double gamma : {0.05, 0.1, 0.2, 0.4}) {
          if (beta > alpha || gamma > 1 - alpha) continue;
          HoltWintersFit candidate = run_holt_winters(history.values, m, alpha, beta, gamma);
          if (candidate.sse < best.sse) best = std::move(candidate);
        }
      }
    }
    const std::size_t n = history.values.size();
    const double md = static_cast<double>(m);
    return normal_forecast(
        history, horizon, "holt_winters",
        [&](int h) {
          return best.level + h * best.trend + best.seasonal[(n - 1 + static_cast<std::size_t>(h)) % m];
        },
        [&](int h) {
          const double a = best.alpha, b = best.beta, g = best.gamma, hd = h;
          const double k = std::floor((hd - 1) / md);
          const double variance = 1 + (hd - 1) * (a * a + a * b * hd + b * b * hd * (2 * hd - 1) / 6) +
                                  k * (g * (2 * a + g) + b * g * md * (k + 1));
          return best.sigma * std::sqrt(variance);
        });
  }
};

}  // namespace

std::unique_ptr<Forecaster> make_seasonal_naive(Seasonality seasonality) {
  return std::make_unique<SeasonalNaive>(seasonality);
}

std::unique_ptr<Forecaster> make_holt_winters() { return std::make_unique<HoltWinters>(); }

}  // namespace fleetcast::forecast
