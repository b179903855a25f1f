#include "tools/serve/endpoints.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include "core/json_text.h"
#include "fleetcast/export.h"
#include "fleetcast/forecast.h"
#include "fleetcast/plan.h"
#include "fleetcast/report.h"
#include "fleetcast/run.h"
#include "tools/cli/commands.h"

namespace fleetcast::serve {

namespace {

// The query parameters of one endpoint: each read at most as declared, any other refused.
class Query {
 public:
  Query(const QueryParameters& parameters, std::initializer_list<std::string_view> known)
      : parameters_(parameters), known_(known.begin(), known.end()) {}

  /// Every parameter is a known one, and given once unless `repeatable` (the offers' region).
  [[nodiscard]] Status check_known(std::string_view repeatable = {}) const {
    for (const auto& [name, value] : parameters_) {
      if (std::find(known_.begin(), known_.end(), name) == known_.end()) {
        std::string expected;
        for (std::string_view known : known_) expected += (expected.empty() ? "" : ", ") + std::string(known);
        return invalid_argument_error("unknown query parameter '" + name + "'; expected " +
                                      (expected.empty() ? "none" : "one of " + expected));
      }
      if (name != repeatable && parameters_.count(name) > 1) {
        return invalid_argument_error("query parameter '" + name + "' is given " + std::to_string(parameters_.count(name)) +
                                      " times; expected it once");
      }
    }
    return {};
  }
  // The value given for `name` (check_known refuses it twice).
  [[nodiscard]] std::optional<std::string> text(const std::string& name) const {
    auto [first, last] = parameters_.equal_range(name);
    if (first == last) return std::nullopt;
    return std::prev(last)->second;
  }
  [[nodiscard]] std::vector<std::string> all(const std::string& name) const {
    std::vector<std::string> values;
    for (auto [it, last] = parameters_.equal_range(name); it != last; ++it) values.push_back(it->second);
    return values;
  }
  template <class Number>
  Result<std::optional<Number>> number(const std::string& name, Number low, Number high) const {
    const std::optional<std::string> value = text(name);
    if (!value) return std::optional<Number>();
    Number parsed{};
    const char* end = value->data() + value->size();
    const auto [stop, error] = std::from_chars(value->data(), end, parsed);
    if (error != std::errc() || stop != end || !(parsed >= low && parsed <= high)) {
      return invalid_argument_error("query parameter '" + name + "': expected a number from " + json_text::dump(nlohmann::json(low)) +
                                    " to " + json_text::dump(nlohmann::json(high)) + ", got '" + *value + "'");
    }
    return std::optional<Number>(parsed);
  }
  // The truth value given for `name`: "true" or "false".
  Result<std::optional<bool>> flag(const std::string& name) const {
    const std::optional<std::string> value = text(name);
    if (!value) return std::optional<bool>();
    if (*value != "true" && *value != "false") {
      return invalid_argument_error("query parameter '" + name + "': expected true or false, got '" + *value + "'");
    }
    return std::optional<bool>(*value == "true");
  }
  // The duration given for `name` (parse_duration's text, "1d", "90m"), named in its error.
  Result<std::optional<Seconds>> duration(const std::string& name) const {
    const std::optional<std::string> value = text(name);
    if (!value) return std::optional<Seconds>();
    auto parsed = parse_duration(*value);
    if (!parsed.ok()) return parsed.status().with_context("query parameter '" + name + "'");
    return std::optional<Seconds>(*parsed);
  }

 private:
  const QueryParameters& parameters_;
  std::vector<std::string_view> known_;
};

Reply json_document(std::string body) { return Reply{200, "application/json", std::move(body)}; }
Reply html_document(std::string body) { return Reply{200, "text/html; charset=utf-8", std::move(body)}; }

struct LoadedScenario {
  Scenario scenario;
  std::unique_ptr<PriceSource> prices;
};

// The scenario in the body, its files confined to the data root, and the prices it names.
Result<LoadedScenario> load_scenario_body(const EndpointContext& context, std::string_view body) {
  auto scenario = load_scenario_json_under(body, "body", context.data_root);
  if (!scenario.ok()) return scenario.status();
  auto prices = open_scenario_prices(scenario->pricing);
  if (!prices.ok()) return prices.status().with_context("body");
  return LoadedScenario{std::move(*scenario), std::move(*prices)};
}

// What an endpoint reads: the document (a scenario, or a plan for /v1/export), its options, and
// the forecasts supplied in place of the forecaster (plan and backtest).
struct RequestInput {
  std::string document;         // the document's JSON text
  QueryParameters parameters;   // the query's, plus the envelope's options
  std::map<std::string, forecast::QuantileForecast> forecasts;  // by workload name
};

// The envelope's "forecasts": {"<workload>": <a forecast document, as `forecast predict --json`
// writes it>, ...}, read as `plan --forecast WORKLOAD=FILE` reads each file.
Result<std::map<std::string, forecast::QuantileForecast>> supplied_forecasts(const nlohmann::json& forecasts) {
  if (!forecasts.is_object()) return invalid_argument_error("body: forecasts: expected an object of forecasts by workload name");
  std::map<std::string, forecast::QuantileForecast> read;
  for (const auto& [workload, document] : forecasts.items()) {
    auto supplied = forecast::quantile_forecast_from_json(json_text::dump(document), "body: forecasts/" + workload);
    if (!supplied.ok()) return supplied.status();
    read.emplace(workload, std::move(*supplied));
  }
  return read;
}

// A JSON number as a query parameter would hold it: 2.0 and 1e5 as "2" and "100000" (a count),
// 1e-9 as "0.000000001" (an amount of USD), never in an exponent form no query reader takes.
std::string number_as_query_text(const nlohmann::json& number) {
  const std::string shortest = json_text::dump(number);
  if (!number.is_number_float()) return shortest;
  const double value = number.get<double>();
  if (value == std::trunc(value) && std::abs(value) < 9007199254740992.0) {  // whole, and exact in a double
    return std::to_string(static_cast<std::int64_t>(value));
  }
  if (shortest.find_first_of("eE") == std::string::npos) return shortest;
  char text[400];
  std::snprintf(text, sizeof text, "%.20f", value);
  std::string fixed = text;
  fixed.erase(fixed.find_last_not_of('0') + 1);
  return fixed;
}

// A body is the document itself, or an envelope {"<document_key>": {...}, "options": {...}} whose
// options are query parameters given as JSON strings or numbers (read exactly as if they were in
// the query; one given both ways is refused), and, where `takes_forecasts`, "forecasts" (see
// supplied_forecasts). A body that is not JSON goes on as the document, so its parse error is the
// one `fleetcast validate` gives.
Result<RequestInput> request_input(const EndpointRequest& request, const std::string& document_key, bool takes_forecasts) {
  RequestInput input{std::string(request.body), request.query, {}};
  auto parsed = json_text::parse(request.body);
  const auto* body = std::get_if<nlohmann::json>(&parsed);
  if (body == nullptr || !body->is_object() || !body->contains(document_key)) return input;
  for (const auto& [key, value] : body->items()) {
    if (key != document_key && key != "options" && !(takes_forecasts && key == "forecasts")) {
      return invalid_argument_error("body: unknown field '" + key + "'; expected " + document_key +
                                    (takes_forecasts ? ", options and forecasts" : " and options"));
    }
  }
  if (body->contains("forecasts")) {
    auto forecasts = supplied_forecasts((*body)["forecasts"]);
    if (!forecasts.ok()) return forecasts.status();
    input.forecasts = std::move(*forecasts);
  }
  input.document = json_text::dump((*body)[document_key]);
  const nlohmann::json options = body->value("options", nlohmann::json::object());
  if (!options.is_object()) return invalid_argument_error("body: options: expected an object of query parameters");
  for (const auto& [name, value] : options.items()) {
    if (!value.is_string() && !value.is_number()) {
      return invalid_argument_error("body: options/" + name + ": expected a string or a number");
    }
    if (input.parameters.contains(name)) {
      return invalid_argument_error("option '" + name + "' is given both in the query and in the body");
    }
    input.parameters.emplace(name, value.is_string() ? value.get<std::string>() : number_as_query_text(value));
  }
  return input;
}

// The options `fleetcast plan` and `fleetcast backtest` share (plan_command.cpp), from the query.
Result<PlanOptions> planning_options(const Query& query, RequestInput& input, const EndpointContext& context,
                                     const EndpointRequest& request, int default_replicas) {
  PlanOptions options;
  options.supplied_forecasts = std::move(input.forecasts);
  if (auto risk = query.text("risk")) {
    if (Status status = set_risk_option(options, *risk); !status.ok()) return status.with_context("query parameter 'risk'");
  }
  if (auto budget_text = query.text("budget")) {
    auto budget = parse_usd(*budget_text);
    if (!budget.ok()) return budget.status().with_context("query parameter 'budget'");
    options.budget = *budget;
  }
  // make_plan checks the budget's sign and the forecaster's name (check_plan_options).
  options.forecaster = query.text("forecaster").value_or("auto");
  auto replicas = query.number<int>("replicas", 0, 100000);
  if (!replicas.ok()) return replicas.status();
  options.replicas = replicas->value_or(default_replicas);
  options.registry = context.registry;
  options.threads = context.workers;
  options.executor = context.executor;
  options.cancellation = request.cancellation;
  return options;
}

}  // namespace

Reply error_reply(int status, std::string_view code, std::string_view message) {
  const nlohmann::ordered_json document{{"error", {{"code", code}, {"message", message}}}};
  return Reply{status, "application/json", json_text::dump(document, 2) + "\n"};
}

int http_status(const Status& status) {
  switch (status.code()) {
    case StatusCode::invalid_argument:
    case StatusCode::out_of_range: return 400;
    case StatusCode::permission_denied: return 403;
    case StatusCode::not_found: return 404;
    case StatusCode::already_exists: return 409;
    case StatusCode::failed_precondition: return 422;
    case StatusCode::resource_exhausted: return 429;
    case StatusCode::unimplemented: return 501;
    case StatusCode::cancelled:
    case StatusCode::unavailable: return 503;
    default: return 500;
  }
}

Reply status_reply(const Status& status) {
  return error_reply(http_status(status), status_code_name(status.code()), status.message());
}

Reply plan_endpoint(const EndpointContext& context, const EndpointRequest& request) {
  auto input = request_input(request, "scenario", true);
  if (!input.ok()) return status_reply(input.status());
  const Query query(input->parameters, {"risk", "budget", "forecaster", "replicas"});
  if (Status known = query.check_known(); !known.ok()) return status_reply(known);
  auto options = planning_options(query, *input, context, request, 16);
  if (!options.ok()) return status_reply(options.status());
  auto loaded = load_scenario_body(context, input->document);
  if (!loaded.ok()) return status_reply(loaded.status());
  auto plan = make_plan(loaded->scenario, *loaded->prices, *options);
  if (!plan.ok()) return status_reply(plan.status());
  if (request.html) {
    return html_document(plan_report_html(*plan, &loaded->scenario, {.generated_by = cli::report_generated_by("plan")}));
  }
  return json_document(plan_to_json(*plan));
}

Reply simulate_endpoint(const EndpointContext& context, const EndpointRequest& request) {
  auto input = request_input(request, "scenario", false);
  if (!input.ok()) return status_reply(input.status());
  const Query query(input->parameters, {"replicas"});
  if (Status known = query.check_known(); !known.ok()) return status_reply(known);
  auto replicas = query.number<int>("replicas", 1, 100000);
  if (!replicas.ok()) return status_reply(replicas.status());
  auto loaded = load_scenario_body(context, input->document);
  if (!loaded.ok()) return status_reply(loaded.status());
  RunOptions options;
  options.simulation.replicas = replicas->value_or(1);
  options.simulation.threads = context.workers;
  options.simulation.executor = context.executor;
  options.simulation.cancellation = request.cancellation;
  options.planning.registry = context.registry;
  auto run = run_scenario(loaded->scenario, *loaded->prices, options);
  if (!run.ok()) return status_reply(run.status());
  if (request.html) {
    return html_document(simulation_report_html(run->report, &loaded->scenario, run->plan ? &*run->plan : nullptr,
                                                {.generated_by = cli::report_generated_by("run")}));
  }
  return json_document(simulation_report_json(run->report));
}

Reply backtest_endpoint(const EndpointContext& context, const EndpointRequest& request) {
  auto input = request_input(request, "scenario", true);
  if (!input.ok()) return status_reply(input.status());
  const Query query(input->parameters, {"train_until", "risk", "budget", "forecaster", "replicas", "optimum_time_limit", "replan_every",
                                             "replan_on_drift"});
  if (Status known = query.check_known(); !known.ok()) return status_reply(known);
  const std::optional<std::string> train_until = query.text("train_until");
  if (!train_until) return status_reply(invalid_argument_error("query parameter 'train_until' is required: the cut, an instant inside the scenario's horizon (RFC 3339 UTC)"));
  auto cut = parse_instant(*train_until);
  if (!cut.ok()) return status_reply(cut.status().with_context("query parameter 'train_until'"));
  auto options = planning_options(query, *input, context, request, 0);
  if (!options.ok()) return status_reply(options.status());
  auto time_limit = query.number<double>("optimum_time_limit", 1e-3, 1e6);
  if (!time_limit.ok()) return status_reply(time_limit.status());
  BacktestOptions backtest;
  // The solvers stop at their own time limit, not at the token: keep them inside the request's.
  backtest.optimum_time_limit_seconds = time_limit->value_or(60.0);
  backtest.deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                             std::chrono::duration<double>(request.seconds_left));
  auto every = query.duration("replan_every");
  if (!every.ok()) return status_reply(every.status());
  backtest.replan_every = every->value_or(Seconds{0});
  auto on_drift = query.flag("replan_on_drift");
  if (!on_drift.ok()) return status_reply(on_drift.status());
  backtest.replan_on_drift = on_drift->value_or(false);
  auto loaded = load_scenario_body(context, input->document);
  if (!loaded.ok()) return status_reply(loaded.status());
  auto result = run_plan_backtest(loaded->scenario, *loaded->prices, *cut, *options, backtest);
  if (!result.ok()) return status_reply(result.status());
  if (request.html) {
    return html_document(backtest_report_html(*result, &loaded->scenario, {.generated_by = cli::report_generated_by("backtest")}));
  }
  return json_document(backtest_json(*result));
}

Reply export_endpoint([[maybe_unused]] const EndpointContext& context, const EndpointRequest& request) {
  auto input = request_input(request, "plan", false);
  if (!input.ok()) return status_reply(input.status());
  const Query query(input->parameters, {"format", "max_actions", "window"});
  if (Status known = query.check_known(); !known.ok()) return status_reply(known);
  const std::string format_name = query.text("format").value_or("");
  const std::optional<exporters::ExportFormat> format = exporters::parse_export_format(format_name);
  if (!format) {
    return status_reply(invalid_argument_error("query parameter 'format': expected aws, cloudformation or kubernetes, got '" +
                                               format_name + "'"));
  }
  exporters::ExportOptions options;
  auto max_actions = query.number<std::size_t>("max_actions", 1, 125);
  if (!max_actions.ok()) return status_reply(max_actions.status());
  options.max_actions = max_actions->value_or(exporters::kDefaultMaxActionsPerGroup);
  auto window = query.duration("window");
  if (!window.ok()) return status_reply(window.status());
  options.window = *window;
  auto plan = plan_from_json(input->document, "body");
  if (!plan.ok()) return status_reply(plan.status());
  auto rendered = exporters::render_export(*plan, *format, options);
  if (!rendered.ok()) return status_reply(rendered.status().with_context("body"));
  return json_document(exporters::export_documents_json(*rendered, *format, nullptr));
}

Reply offers_endpoint(const EndpointContext& context, const QueryParameters& parameters) {
  const Query query(parameters, {"provider", "gpu", "region", "option", "min_gpus"});
  if (Status known = query.check_known("region"); !known.ok()) return status_reply(known);
  OfferFilters filters;
  filters.provider = query.text("provider").value_or("");
  filters.gpu_model = query.text("gpu").value_or("");
  filters.regions = query.all("region");
  filters.option = query.text("option").value_or("");
  auto min_gpus = query.number<int>("min_gpus", 0, 1 << 20);
  if (!min_gpus.ok()) return status_reply(min_gpus.status());
  filters.min_gpu_count = min_gpus->value_or(0);
  auto offer_query_result = offer_query(filters);
  if (!offer_query_result.ok()) return status_reply(offer_query_result.status().with_context("query parameter 'option'"));
  auto rows = context.offers_catalog->offers(*offer_query_result);
  if (!rows.ok()) return status_reply(rows.status());
  return json_document(offers_json(*rows));
}

}  // namespace fleetcast::serve
