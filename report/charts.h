// The Vega-Lite specifications the reports draw, built from rows of data the report layer
// computed. Each function states the fields its rows carry. Time values are milliseconds since the
// epoch (epoch_ms), shown in UTC.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/html_page.h"

namespace fleetcast::report {

/// One time chart: demand-side series on the left axis, capacity stacked on the right axis, one
/// shared time axis that zooms (scroll) and pans (drag) along x.
struct Timeline {
  std::string title;
  std::string subtitle;          // what was downsampled, and how
  std::string demand_title;      // left axis, e.g. "demand (requests_per_second)"
  std::string capacity_title;    // right axis, e.g. "planned GPUs"
  Json demand = Json::array();   // rows {t, series, v} and, when downsampled, {lo, hi}: one line per series
  Json band = Json::array();     // rows {t, p10, p50, p90}: the forecast band and its median
  Json capacity = Json::array(); // rows {t, pool, gpus}: areas stacked by pool
  bool ranges = false;           // demand rows carry lo/hi
};
Json timeline_chart(const Timeline& timeline);

/// Bars of `value` per `category`, stacked and coloured by `stack`: rows {category, stack, value}.
/// `time_categories`: categories are days (epoch ms), drawn on a time axis.
Json stacked_bars(const std::string& title, const std::string& subtitle, const std::string& value_title, Json rows,
                  bool time_categories);

/// One tick per row {v} (a replica) on one axis, with vertical rules at rows {v, label} (a budget,
/// an SLO).
Json replica_ticks(const std::string& title, const std::string& subtitle, const std::string& value_title, Json values,
               Json rules, bool percent_axis);

/// Points on one axis, with labels, and rules: for a distribution known only by its summary
/// (rows {v, label}; rules {v, label}).
Json summary_strip(const std::string& title, const std::string& subtitle, const std::string& value_title, Json points,
                   Json rules, bool percent_axis);

/// Horizontal bars of rows {label, v} with a rule at `reference` (e.g. the hindsight optimum).
Json bars_with_rule(const std::string& title, const std::string& value_title, Json rows, std::optional<double> reference,
                    const std::string& reference_label, bool percent_axis);

/// Lines of rows {t, series, v} on a zoomable time axis.
Json time_lines(const std::string& title, const std::string& subtitle, const std::string& value_title, Json rows,
                bool percent_axis, Json rules = Json::array());

/// Cost against served fraction per parameter set: rows {parameters, scenario, cost, p95, served,
/// pareto}; the Pareto front's points joined in cost order.
Json pareto_chart(const std::string& title, Json rows);

}  // namespace fleetcast::report
