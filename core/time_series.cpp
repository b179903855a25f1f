#include "fleetcast/time_series.h"

#include <cmath>
#include <string>

#include "core/csv.h"
#include "core/text.h"

namespace fleetcast {

namespace {

/// Epoch seconds, or an RFC 3339 time; either must lie in the years parse_instant reads, which
/// also keeps the difference of two timestamps far from int64 overflow.
Result<std::int64_t> parse_timestamp(std::string_view field) {
  if (auto seconds = text::parse_int64(field)) {
    if (!within_instant_range(*seconds)) {
      return invalid_argument_error("timestamp '" + std::string(field) +
                                    "' is outside the years 0000 to 9999, expected epoch seconds from " +
                                    std::to_string(kEarliestInstant.time_since_epoch().count()) + " to " +
                                    std::to_string(kLatestInstant.time_since_epoch().count()));
    }
    return *seconds;
  }
  if (auto instant = parse_instant(field); instant.ok()) return instant->time_since_epoch().count();
  return invalid_argument_error("timestamp '" + std::string(field) + "' is not integer seconds or an RFC 3339 UTC time");
}

}  // namespace

Result<TimeSeries> read_time_series_csv(const std::filesystem::path& path) {
  auto table = csv::read_file(path);
  if (!table.ok()) return table.status();
  const auto columns = table->require_columns({"timestamp", "value"});
  if (!columns.ok()) return columns.status();
  const std::size_t time_column = (*columns)[0];
  const std::size_t value_column = (*columns)[1];
  if (table->rows.empty()) {
    return invalid_argument_error(table->source + ": no rows after the header, expected at least one sample");
  }
  TimeSeries series;
  series.values.reserve(table->rows.size());
  std::int64_t previous = 0;
  for (std::size_t row = 0; row < table->rows.size(); ++row) {
    const std::string_view time_field = text::trim(table->rows[row][time_column]);
    const std::string_view value_field = text::trim(table->rows[row][value_column]);
    const auto timestamp = parse_timestamp(time_field);
    if (!timestamp.ok()) return invalid_argument_error(table->where(row) + ": " + timestamp.status().message());
    const auto value = text::parse_double(value_field);
    if (!value) {
      return invalid_argument_error(table->where(row) + ": value '" + std::string(value_field) +
                                    "' is not a finite number");
    }
    if (std::abs(*value) > kMaxSeriesMagnitude) {
      return invalid_argument_error(table->where(row) + ": value '" + std::string(value_field) +
                                    "' is beyond 1e15 in magnitude, expected a load (GPUs, requests per second) below it");
    }
    if (row == 0) {
      series.start_seconds = *timestamp;
    } else if (*timestamp <= previous) {
      return invalid_argument_error(table->where(row) + ": timestamp " + std::to_string(*timestamp) +
                                    " is not after the previous one (" + std::to_string(previous) +
                                    "), expected strictly increasing times");
    } else if (row == 1) {
      series.step = Seconds{*timestamp - previous};
    } else if (*timestamp - previous != series.step.count()) {
      return invalid_argument_error(
          table->where(row) + ": gap in the series: " + std::to_string(*timestamp - previous) +
          " s after the previous sample, expected the constant step of " + std::to_string(series.step.count()) +
          " s");
    }
    previous = *timestamp;
    series.values.push_back(*value);
  }
  return series;
}

}  // namespace fleetcast
