// The endpoints of `fleetcast serve` as functions from a request to a reply, free of HTTP
// plumbing: each reads its options from the query (or from an envelope body
// {"scenario"|"plan": document, "options": {...}}), its input from the body, calls the library
// function the CLI calls for the same command, and answers with the document the CLI prints with
// --json (or the HTML report the CLI writes with --html, when the client accepts text/html).
//
// Thread-safety: the functions are reentrant; the context is read-only while they run.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "fleetcast/cancellation.h"
#include "fleetcast/executor.h"
#include "fleetcast/forecast.h"
#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"
#include "fleetcast/status.h"

namespace fleetcast::serve {

struct Reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

/// {"error": {"code": code, "message": message}} with HTTP status `status`.
Reply error_reply(int status, std::string_view code, std::string_view message);

/// The HTTP status of a library error, one mapping for every endpoint: invalid_argument and
/// out_of_range 400, permission_denied 403, not_found 404, already_exists 409, failed_precondition
/// 422, resource_exhausted 429, unimplemented 501, cancelled and unavailable 503, else 500.
int http_status(const Status& status);
/// error_reply(http_status(status), status_code_name(status.code()), status.message()).
Reply status_reply(const Status& status);

/// What every endpoint shares; owned by the server, read-only.
struct EndpointContext {
  FileRoot data_root;                              // where scenario bodies may read files
  const PriceSource* offers_catalog = nullptr;     // GET /v1/offers
  const forecast::BackendRegistry* registry = nullptr;
  Executor* executor = nullptr;                    // the Monte Carlo replicas run here too
  int workers = 1;                                 // the executor's concurrency
};

using QueryParameters = std::multimap<std::string, std::string>;

struct EndpointRequest {
  std::string_view body;
  const QueryParameters& query;
  bool html = false;                               // the client accepts text/html
  const CancellationToken* cancellation = nullptr;
  double seconds_left = 60;                        // until the request's time limit
};

/// POST /v1/plan: make_plan -> plan_to_json (plan_report_html). Query: risk, budget, forecaster,
/// replicas (default 16), as `fleetcast plan`'s options.
Reply plan_endpoint(const EndpointContext& context, const EndpointRequest& request);
/// POST /v1/simulate: run_scenario -> simulation_report_json (simulation_report_html). Query:
/// replicas (default 1), as `fleetcast run`.
Reply simulate_endpoint(const EndpointContext& context, const EndpointRequest& request);
/// POST /v1/backtest: run_plan_backtest -> backtest_json (backtest_report_html). Query:
/// train_until (required), risk, budget, forecaster, replicas (default 0), optimum_time_limit
/// (default 60, and never past the request's time limit), replan_every (a duration), replan_on_drift
/// (true or false).
Reply backtest_endpoint(const EndpointContext& context, const EndpointRequest& request);
/// POST /v1/export: a plan document in, render_export -> export_documents_json out. Query: format
/// (aws, cloudformation or kubernetes; required), max_actions, window.
Reply export_endpoint(const EndpointContext& context, const EndpointRequest& request);
/// GET /v1/offers: the catalog's offers through `pricing list`'s filters -> offers_json. Query:
/// provider, gpu, region (repeatable), option, min_gpus.
Reply offers_endpoint(const EndpointContext& context, const QueryParameters& query);

}  // namespace fleetcast::serve
