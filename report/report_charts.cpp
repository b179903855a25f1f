#include "report/charts.h"

#include <algorithm>
#include <iterator>

namespace fleetcast::report {

namespace {

constexpr const char* kSchema = "https://vega.github.io/schema/vega-lite/v5.json";  // an identifier; never fetched
constexpr const char* kMarker = "#d62728";  // budgets, SLOs, optima, break-even: what a reader compares against

Json title_of(const std::string& title, const std::string& subtitle) {
  Json out = {{"text", title}, {"anchor", "start"}};
  if (!subtitle.empty()) out["subtitle"] = subtitle;
  return out;
}

Json time_x() { return {{"field", "t"}, {"type", "temporal"}, {"title", "time (UTC)"}, {"scale", {{"type", "utc"}}}}; }

// Scroll zooms and drag pans the time axis of the view that holds it (and the layers sharing it).
Json zoom() {
  return Json::array({{{"name", "zoom"}, {"select", {{"type", "interval"}, {"encodings", {"x"}}}}, {"bind", "scales"}}});
}

Json quantity(const std::string& field, const std::string& title, bool percent_axis) {
  Json out = {{"field", field}, {"type", "quantitative"}, {"title", title}};
  if (percent_axis) {
    out["axis"] = {{"format", ".3~%"}};
    out["scale"] = {{"zero", false}};
  }
  return out;
}

Json base(const std::string& title, const std::string& subtitle) {
  return {{"$schema", kSchema}, {"title", title_of(title, subtitle)}, {"width", "container"},
          {"autosize", {{"type", "fit-x"}, {"contains", "padding"}}}};
}

// Rules at rows {v, label} across the chart, in the marker colour, labelled at the top.
Json rule_layers(const Json& rules, const std::string& channel) {
  Json position = {{"field", "v"}, {"type", "quantitative"}};
  Json rule = {{"data", {{"values", rules}}},
               {"mark", {{"type", "rule"}, {"color", kMarker}, {"strokeWidth", 2}, {"strokeDash", {6, 3}}}},
               {"encoding", {{channel, position}}}};
  Json text = {{"data", {{"values", rules}}},
               {"mark", {{"type", "text"}, {"color", kMarker}, {"align", "left"}, {"baseline", "top"}, {"dx", 4}, {"dy", 4}}},
               {"encoding", {{channel, position}, {"text", {{"field", "label"}}}}}};
  if (channel == "x") {
    text["encoding"]["y"] = {{"value", 0}};
  } else {
    text["encoding"]["x"] = {{"value", 0}};
    text["mark"]["baseline"] = "bottom";
    text["mark"]["dy"] = -2;
  }
  return Json::array({rule, text});
}

void add_rules(Json& layers, const Json& rules, const std::string& channel) {
  if (rules.empty()) return;
  for (Json& layer : rule_layers(rules, channel)) layers.push_back(std::move(layer));
}

}  // namespace

namespace {

// One colour scale for the demand side, fixed so that it never repeats the pools' pastel areas:
// the forecast in blues, the measured series in dark and warm colours.
Json demand_color_scale(const Timeline& timeline) {
  Json domain = Json::array();
  Json range = Json::array();
  if (!timeline.band.empty()) {
    domain.push_back("forecast p10-p90");
    range.push_back("#9ecae1");
    domain.push_back("forecast p50");
    range.push_back("#08519c");
  }
  const char* measured[] = {"#252525", "#d94801", "#238b45", "#6a51a3", "#a50f15"};
  std::size_t next = 0;
  for (const Json& row : timeline.demand) {
    if (std::find(domain.begin(), domain.end(), row["series"]) != domain.end()) continue;
    domain.push_back(row["series"]);
    range.push_back(measured[next++ % std::size(measured)]);
  }
  return {{"domain", domain}, {"range", range}};
}

// The demand side's layers: the forecast's p10-p90 band and median, then the measured series (with
// their within-bucket ranges when downsampled).
Json demand_layers(const Timeline& timeline) {
  Json layers = Json::array();
  const auto y_field = [&](const char* field) {
    return Json{{"type", "quantitative"}, {"title", timeline.demand_title}, {"field", field}};
  };
  const Json legend = {{"title", "demand"}};
  const Json scale = demand_color_scale(timeline);
  if (!timeline.band.empty()) {
    layers.push_back({{"data", {{"name", "band"}}},
                      {"mark", {{"type", "area"}, {"opacity", 0.3}}},
                      {"encoding",
                       {{"x", time_x()}, {"y", y_field("p10")}, {"y2", {{"field", "p90"}}},
                        {"color", {{"datum", "forecast p10-p90"}, {"type", "nominal"}, {"legend", legend}, {"scale", scale}}}}}});
    layers.push_back({{"data", {{"name", "band"}}},
                      {"mark", {{"type", "line"}, {"strokeDash", {5, 3}}, {"strokeWidth", 1.5}}},
                      {"encoding",
                       {{"x", time_x()}, {"y", y_field("p50")},
                        {"color", {{"datum", "forecast p50"}, {"type", "nominal"}, {"legend", legend}, {"scale", scale}}}}}});
  }
  if (timeline.demand.empty()) return layers;
  const Json by_series = {{"field", "series"}, {"type", "nominal"}, {"legend", legend}, {"scale", scale}};
  if (timeline.ranges) {
    layers.push_back({{"data", {{"name", "demand"}}},
                      {"mark", {{"type", "area"}, {"opacity", 0.18}}},
                      {"encoding", {{"x", time_x()}, {"y", y_field("lo")}, {"y2", {{"field", "hi"}}}, {"color", by_series}}}});
  }
  layers.push_back({{"data", {{"name", "demand"}}},
                    {"mark", {{"type", "line"}, {"strokeWidth", 1.2}}},
                    {"encoding", {{"x", time_x()}, {"y", y_field("v")}, {"color", by_series}}}});
  return layers;
}

}  // namespace

Json timeline_chart(const Timeline& timeline) {
  Json spec = base(timeline.title, timeline.subtitle);
  spec["height"] = 260;
  spec["datasets"] = {{"demand", timeline.demand}, {"band", timeline.band}, {"capacity", timeline.capacity}};
  const Json demand = demand_layers(timeline);
  Json layers = Json::array();
  if (!timeline.capacity.empty()) {
    layers.push_back({{"data", {{"name", "capacity"}}},
                      {"mark", {{"type", "area"}, {"opacity", 0.8}, {"interpolate", "step-after"}}},
                      {"encoding",
                       {{"x", time_x()},
                        {"y", {{"field", "gpus"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", timeline.capacity_title},
                               {"axis", {{"orient", "right"}}}}},
                        {"color", {{"field", "pool"}, {"type", "nominal"}, {"title", "GPUs by pool"}, {"scale", {{"scheme", "pastel1"}}}}}}}});
  }
  if (!demand.empty()) layers.push_back({{"layer", demand}});
  // The zoom lives on one unit view; the layers share its x scale.
  if (!timeline.capacity.empty()) {
    layers[0]["params"] = zoom();
  } else if (!demand.empty()) {
    layers[0]["layer"][0]["params"] = zoom();
  }
  spec["layer"] = layers;
  spec["resolve"] = {{"scale", {{"y", "independent"}, {"color", "independent"}}}};
  return spec;
}

Json stacked_bars(const std::string& title, const std::string& subtitle, const std::string& value_title, Json rows,
                  bool time_categories) {
  Json spec = base(title, subtitle);
  spec["data"] = {{"values", std::move(rows)}};
  spec["mark"] = {{"type", "bar"}, {"tooltip", true}};
  const Json value = {{"aggregate", "sum"}, {"field", "value"}, {"type", "quantitative"}, {"title", value_title}};
  const Json color = {{"field", "stack"}, {"type", "nominal"}, {"title", nullptr}};
  if (time_categories) {
    spec["height"] = 220;
    spec["encoding"] = {{"x", {{"field", "category"}, {"type", "temporal"}, {"timeUnit", "utcyearmonthdate"}, {"title", "day (UTC)"}}},
                        {"y", value},
                        {"color", color}};
  } else {
    spec["encoding"] = {{"y", {{"field", "category"}, {"type", "nominal"}, {"sort", "-x"}, {"title", nullptr}, {"axis", {{"labelLimit", 360}}}}},
                        {"x", value},
                        {"color", color}};
  }
  return spec;
}

Json replica_ticks(const std::string& title, const std::string& subtitle, const std::string& value_title, Json values,
                   Json rules, bool percent_axis) {
  // One tick per replica rather than a histogram: a budget or an SLO far from the replicas would
  // squeeze a histogram's bins into a sliver; ticks stay readable on any axis.
  Json spec = base(title, subtitle);
  spec["height"] = 60;
  Json x = quantity("v", value_title, percent_axis);
  x["scale"] = {{"zero", false}};
  Json layers = Json::array({{{"data", {{"values", std::move(values)}}},
                              {"mark", {{"type", "tick"}, {"opacity", 0.6}, {"thickness", 2}, {"tooltip", true}}},
                              {"encoding", {{"x", x}}}}});
  add_rules(layers, rules, "x");
  spec["layer"] = layers;
  return spec;
}

Json summary_strip(const std::string& title, const std::string& subtitle, const std::string& value_title, Json points,
                   Json rules, bool percent_axis) {
  Json spec = base(title, subtitle);
  spec["height"] = 70;
  Json layers = Json::array({{{"data", {{"values", std::move(points)}}},
                              {"mark", {{"type", "point"}, {"filled", true}, {"size", 120}, {"tooltip", true}}},
                              {"encoding",
                               {{"x", quantity("v", value_title, percent_axis)},
                                {"color", {{"field", "label"}, {"type", "nominal"}, {"title", nullptr}}}}}}});
  if (!percent_axis) layers[0]["encoding"]["x"]["scale"] = {{"zero", false}};
  add_rules(layers, rules, "x");
  spec["layer"] = layers;
  return spec;
}

Json bars_with_rule(const std::string& title, const std::string& value_title, Json rows, std::optional<double> reference,
                    const std::string& reference_label, bool percent_axis) {
  Json spec = base(title, "");
  // Fractions near 1 are compared as points on an axis that does not start at zero; costs as bars.
  Json mark = percent_axis ? Json{{"type", "point"}, {"filled", true}, {"size", 120}, {"tooltip", true}}
                           : Json{{"type", "bar"}, {"tooltip", true}};
  Json layers = Json::array({{{"data", {{"values", std::move(rows)}}},
                              {"mark", mark},
                              {"encoding",
                               {{"y", {{"field", "label"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}}},
                                {"x", quantity("v", value_title, percent_axis)}}}}});
  if (reference) add_rules(layers, Json::array({{{"v", *reference}, {"label", reference_label}}}), "x");
  spec["layer"] = layers;
  return spec;
}

Json time_lines(const std::string& title, const std::string& subtitle, const std::string& value_title, Json rows,
                bool percent_axis, Json rules) {
  Json spec = base(title, subtitle);
  spec["height"] = 240;
  Json y = quantity("v", value_title, percent_axis);
  Json layers = Json::array({{{"data", {{"values", std::move(rows)}}},
                              {"params", zoom()},
                              {"mark", {{"type", "line"}, {"strokeWidth", 1.5}}},
                              {"encoding",
                               {{"x", time_x()}, {"y", y}, {"color", {{"field", "series"}, {"type", "nominal"}, {"title", nullptr}}}}}}});
  add_rules(layers, rules, "y");
  spec["layer"] = layers;
  return spec;
}

Json pareto_chart(const std::string& title, Json rows) {
  Json spec = base(title, "each point a parameter set (mean over its runs); whisker from the mean cost to its p95; "
                          "the Pareto front joined");
  spec["height"] = 320;
  spec["data"] = {{"values", std::move(rows)}};
  const Json cost = {{"field", "cost"}, {"type", "quantitative"}, {"title", "cost per run, mean (USD)"}, {"scale", {{"zero", false}}}};
  const Json served = {{"field", "served"}, {"type", "quantitative"}, {"title", "served fraction, mean"},
                       {"axis", {{"format", ".3~%"}}}, {"scale", {{"zero", false}}}};
  const Json tooltip = Json::array({{{"field", "scenario"}}, {{"field", "parameters"}},
                                    {{"field", "cost"}, {"format", "$,.2f"}, {"title", "cost mean"}},
                                    {{"field", "p95"}, {"format", "$,.2f"}, {"title", "cost p95"}},
                                    {{"field", "served"}, {"format", ".3%"}}});
  spec["layer"] = Json::array(
      {{{"mark", {{"type", "rule"}, {"opacity", 0.5}}},
        {"encoding", {{"x", cost}, {"x2", {{"field", "p95"}}}, {"y", served}}}},
       {{"transform", Json::array({{{"filter", "datum.pareto"}}})},
        {"mark", {{"type", "line"}, {"color", kMarker}, {"strokeWidth", 1.5}}},
        {"encoding", {{"x", cost}, {"y", served}, {"order", {{"field", "cost"}, {"type", "quantitative"}}}}}},
       {{"params", Json::array({{{"name", "pan"}, {"select", {{"type", "interval"}}}, {"bind", "scales"}}})},
        {"mark", {{"type", "point"}, {"filled", true}, {"size", 90}}},
        {"encoding",
         {{"x", cost}, {"y", served},
          {"color", {{"field", "front"}, {"type", "nominal"}, {"title", nullptr},
                     {"scale", {{"domain", {"on the Pareto front", "dominated"}}, {"range", {kMarker, "#8c8c8c"}}}}}},
          {"tooltip", tooltip}}}}});
  return spec;
}

}  // namespace fleetcast::report
