// The spot availability trace a scenario replays: read and checked when the scenario loads, so
// that `validate` refuses what a run would.
#include "scenarios/availability_trace.h"

#include <limits>

#include "core/text.h"

namespace fleetcast::scenarios {

Result<AvailabilityTrace> parse_availability_trace(const csv::CsvTable& table) {
  const auto columns = table.require_columns({"t_seconds", "available"});
  if (!columns.ok()) return columns.status();
  const std::size_t time_column = (*columns)[0];
  const std::size_t available_column = (*columns)[1];
  if (table.rows.size() < 2) {
    return invalid_argument_error(table.source + ": " + std::to_string(table.rows.size()) +
                                  " rows after the header; expected at least two ticks (the last tick's "
                                  "length is the gap before it)");
  }
  AvailabilityTrace trace;
  trace.source = table.source;
  trace.tick_seconds.reserve(table.rows.size());
  trace.available.reserve(table.rows.size());
  std::int64_t first = 0;
  for (std::size_t row = 0; row < table.rows.size(); ++row) {
    const std::string_view time_field = text::trim(table.rows[row][time_column]);
    const std::string_view available_field = text::trim(table.rows[row][available_column]);
    const auto seconds = text::parse_int64(time_field);
    if (!seconds) {
      return invalid_argument_error(table.where(row) + ": t_seconds '" + std::string(time_field) +
                                    "' is not an integer number of seconds");
    }
    // Within kMaxDuration of zero, like every duration a user writes, so that the shift to the
    // first tick and the last tick's length below stay far from int64 overflow.
    if (*seconds < -kMaxDuration.count() || *seconds > kMaxDuration.count()) {
      return invalid_argument_error(table.where(row) + ": t_seconds " + std::to_string(*seconds) +
                                    " is more than 10,000 years from 0; expected seconds since the trace start");
    }
    const auto available = text::parse_int64(available_field);
    if (!available || *available < 0 || *available > std::numeric_limits<int>::max()) {
      return invalid_argument_error(table.where(row) + ": available '" + std::string(available_field) +
                                    "' is not a non-negative integer count of instances");
    }
    if (row == 0) {
      first = *seconds;
    } else if (*seconds - first <= trace.tick_seconds.back()) {
      return invalid_argument_error(table.where(row) + ": t_seconds " + std::to_string(*seconds) +
                                    " is not after the previous tick (" +
                                    std::to_string(trace.tick_seconds.back() + first) +
                                    "); expected strictly increasing times");
    }
    trace.tick_seconds.push_back(*seconds - first);
    trace.available.push_back(static_cast<int>(*available));
  }
  const std::int64_t last = trace.tick_seconds.back();
  trace.length = Seconds{last + (last - trace.tick_seconds[trace.tick_seconds.size() - 2])};
  return trace;
}

Result<AvailabilityTrace> read_availability_trace(const std::filesystem::path& file) {
  auto table = csv::read_file(file);
  if (!table.ok()) return table.status();
  return parse_availability_trace(*table);
}

}  // namespace fleetcast::scenarios
