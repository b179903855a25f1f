// `fleetcast plan SCENARIO`, `fleetcast commitments SCENARIO` and `fleetcast backtest SCENARIO
// --train-until T`: the planner's answer for a scenario (written as the plan document, summarised
// on the terminal), the reservations owned and bought judged over their terms, and the planner
// checked against the demand that followed a cut, beside the baselines.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/text.h"
#include "fleetcast/forecast.h"
#include "fleetcast/plan.h"
#include "fleetcast/report.h"
#include "tools/cli/commands.h"

namespace fleetcast::cli {

namespace {

// A demand level in the workload's unit: one decimal, or three significant digits below one unit
// (a demand stated in thousands of requests per second, say), where one decimal would print 0.0.
std::string demand_level(double value) {
  char text[32];
  std::snprintf(text, sizeof text, value == 0 || std::abs(value) >= 1 ? "%.1f" : "%.3g", value);
  return text;
}

// The options plan and backtest share.
struct PlanningArguments {
  FileSystem* file_system = nullptr;  // where the output files go
  std::string scenario;
  bool json = false;
  std::optional<std::string> risk;
  std::optional<std::string> budget;
  std::string forecaster = "auto";
  std::string model_file;
  std::vector<std::string> supplied_forecasts;  // WORKLOAD=FILE
  int replicas = 16;
  int threads = 0;
  bool quiet = false;
  std::string html_file;
};

// What to plan and how to forecast it: the options of every planning command.
void add_forecasting_options(CLI::App* command, PlanningArguments& arguments) {
  command->add_option("SCENARIO", arguments.scenario, "Scenario JSON file")->required();
  command->add_option("--risk", arguments.risk,
                      "Demand quantile the capacity serves, 0.5-0.999, or 'validated': replayed on the last two weeks of "
                      "history, the cheapest from the newsvendor fractile up that served the SLO in both weeks and left "
                      "at most half its allowance unserved in 19 of 20 weeks of their days resampled, "
                      "else the scenario's (raised if it missed the SLO; where it is still not safe, the cheapest safe "
                      "floor of recent demand, flat or by time of day, else the one nearest safe) (default: the scenario policy's risk_quantile; "
                      "where it states none, validated for a traced service, else 0.95)");
  command->add_option("--forecaster", arguments.forecaster, "auto, validated, lstm, holt_winters or seasonal_naive")
      ->check(CLI::IsMember({"auto", "validated", "lstm", "holt_winters", "seasonal_naive"}));
  command->add_option("--model", arguments.model_file, "A trained LSTM model file (fleetcast forecast train) for every workload");
  command->add_option("--forecast", arguments.supplied_forecasts,
                      "WORKLOAD=FILE: plan that service from a forecast made elsewhere, as 'fleetcast forecast predict --json' "
                      "writes it (timestamps in its demand CSV's clock; repeatable)");
  command->add_flag("--quiet", arguments.quiet, "No progress lines on stderr");
}

void add_planning_options(CLI::App* command, PlanningArguments& arguments) {
  add_forecasting_options(command, arguments);
  command->add_flag("--json", arguments.json, "Print the result as JSON");
  command->add_option("--budget", arguments.budget, "Cap on the plan's cost over the horizon, in USD: the plan trades SLO for cost and says so");
  command->add_option("--replicas", arguments.replicas, "Monte Carlo replicas of the plan's risk simulation (0: none)")
      ->check(CLI::Range(0, kMaxReplicas));
  command->add_option("--threads", arguments.threads, "Threads for the replicas (0: one per core)")->check(CLI::Range(0, 1024));
  command->add_option("--html", arguments.html_file, "Write a self-contained HTML report (charts, opens offline) to this file");
}

// Everything a planning run needs, owned: the scenario, its prices, the model, the options.
struct PlanningInputs {
  Scenario scenario;
  std::unique_ptr<PriceSource> prices;
  std::optional<forecast::LstmModel> model;
  forecast::BackendRegistry registry;
  PlanOptions options;
};

// Loads the inputs, or prints why not and returns the exit code; `outputs` are the files the
// command will write, refused where they name a file the inputs read.
std::variant<std::unique_ptr<PlanningInputs>, int> load_inputs(const PlanningArguments& arguments,
                                                               std::span<const OutputFile> outputs) {
  auto inputs = std::make_unique<PlanningInputs>();
  auto scenario = load_scenario(arguments.scenario);
  if (!scenario.ok()) {
    std::cerr << scenario.status().message() << '\n';
    return kExitInvalidInput;
  }
  inputs->scenario = std::move(*scenario);
  std::vector<std::pair<std::string, std::string>> forecast_files;  // (workload, file) of each --forecast
  for (const std::string& entry : arguments.supplied_forecasts) {
    const std::size_t equals = entry.find('=');
    if (equals == 0 || equals == std::string::npos || equals + 1 == entry.size()) {
      std::cerr << "--forecast: expected WORKLOAD=FILE, found '" << entry << "'\n";
      return kExitInvalidInput;
    }
    forecast_files.emplace_back(entry.substr(0, equals), entry.substr(equals + 1));
  }
  std::vector<ScenarioFile> read = scenario_files(inputs->scenario);
  for (const auto& [workload, file] : forecast_files) read.push_back({"--forecast " + workload + "=" + file, file});
  if (int code = guard_outputs_against(outputs, read); code != kExitOk) return code;
  auto prices = open_scenario_prices(inputs->scenario.pricing);
  if (!prices.ok()) {
    std::cerr << arguments.scenario << ": " << prices.status().message() << '\n';
    return kExitFailure;
  }
  inputs->prices = std::move(*prices);
  PlanOptions& options = inputs->options;
  if (arguments.risk) {
    if (Status status = set_risk_option(options, *arguments.risk); !status.ok()) {
      std::cerr << "--risk: " << status.message() << '\n';
      return kExitInvalidInput;
    }
  }
  if (arguments.budget) {
    auto budget = parse_usd(*arguments.budget);
    if (!budget.ok() || budget->micro_usd() <= 0) {
      std::cerr << "--budget: expected a positive amount of USD such as 12000 or 12000.50, found '" << *arguments.budget << "'\n";
      return kExitInvalidInput;
    }
    options.budget = *budget;
  }
  options.forecaster = arguments.forecaster;
  if (!arguments.model_file.empty()) {
    auto model = forecast::load_model(arguments.model_file);
    if (!model.ok()) {
      std::cerr << model.status().message() << '\n';
      return kExitInvalidInput;
    }
    inputs->model = std::move(*model);
    options.lstm_model = &*inputs->model;
  }
  for (const auto& [workload, file] : forecast_files) {
    auto supplied = forecast::load_quantile_forecast(file);
    if (!supplied.ok()) {
      std::cerr << "--forecast: " << supplied.status().message() << '\n';
      return kExitInvalidInput;
    }
    if (!options.supplied_forecasts.emplace(workload, std::move(*supplied)).second) {
      std::cerr << "--forecast: workload '" << workload << "' is given two forecasts; give one\n";
      return kExitInvalidInput;
    }
  }
  options.registry = &inputs->registry;
  options.replicas = arguments.replicas;
  options.threads = arguments.threads;
  if (!arguments.quiet) options.on_progress = [](std::string_view line) { std::cerr << "fleetcast: " << line << '\n'; };
  return inputs;
}

// A commitment's valuation over its term and why it was chosen, under its "buy" line.
void print_term(std::ostream& out, const TermValuation& term, const std::string& term_choice) {
  if (term.months == 0) return;
  char line[400];
  std::snprintf(line, sizeof line,
                "            over %d months: expected saving $%.0f (p5 $%.0f, p95 $%.0f), upfront $%.0f, breaks even %s\n",
                term.months, term.expected_net_saving.usd(), term.net_saving_p5.usd(), term.net_saving_p95.usd(),
                term.upfront_cash.usd(),
                term.break_even_month > 0 ? ("in month " + std::to_string(term.break_even_month)).c_str() : "never");
  out << line << "            " << term_choice << '\n';
}

// The reservations and Savings Plans to buy with their term valuation (a purchase dated after the
// horizon's start with its date and why), those the term declined, and the owned ones expiring.
void print_recommended_commitments(std::ostream& out, const Plan& plan) {
  char line[400];
  if (plan.commitments.empty()) out << "  buy       no reservations\n";
  for (const CommitmentRecommendation& commitment : plan.commitments) {
    std::snprintf(line, sizeof line,
                  "  buy       %d x %s in %s, %s %s %s at $%.4f/h: expected use %.1f%% vs break-even %.1f%%, saving $%.2f over the horizon\n",
                  commitment.count, commitment.instance_type.c_str(), commitment.region.c_str(),
                  std::string(reservation_term_name(commitment.terms.term)).c_str(),
                  std::string(reservation_class_name(commitment.terms.reservation_class)).c_str(),
                  std::string(upfront_payment_name(commitment.terms.payment)).c_str(), commitment.hourly_cost.usd(),
                  commitment.expected_utilisation * 100, commitment.break_even_utilisation * 100, commitment.expected_saving.usd());
    out << line;
    if (commitment.start != plan.horizon.start) out << "            on " << format_instant(commitment.start) << ": " << commitment.reason << '\n';
    print_term(out, commitment.term, commitment.term_choice);
  }
  if (plan.savings_plans.empty()) out << "  buy       no Savings Plans\n";
  for (const SavingsPlanRecommendation& bought : plan.savings_plans) {
    std::snprintf(line, sizeof line, ": expected use %.1f%% of the commitment, saving $%.2f over the horizon\n",
                  bought.expected_utilisation * 100, bought.expected_saving.usd());
    out << "  buy       " << savings_plan_label(bought.plan) << line;
    if (bought.plan.start != plan.horizon.start) out << "            on " << format_instant(bought.plan.start) << ": ";
    else out << "            ";
    out << bought.reason << '\n';
    print_term(out, bought.term, bought.term_choice);
  }
  for (const std::string& declined : plan.declined_commitments) out << "  declined  " << declined << '\n';
  for (const ExpiringCommitment& owned : plan.expiring_commitments) {
    out << "  expiring  " << owned.commitment << " on " << format_instant(owned.expires) << ": "
        << expiry_decision_name(owned.decision) << " - " << owned.reason << '\n';
  }
}

// Where an owned commitment stands against the plan's horizon; one expiring inside is decided
// under 'expiring'.
std::string standing(Instant start, Instant end, const Horizon& horizon) {
  const CommitmentStanding where = commitment_standing(start, end, horizon);
  return std::string(commitment_standing_name(where)) +
         (where == CommitmentStanding::expires_inside ? " (decided under 'expiring')" : "");
}

// The reservations and Savings Plans the scenario owns, where each stands, and which of the
// reservations no instance of the plan can use.
void print_owned_commitments(std::ostream& out, const Scenario& scenario, const Plan& plan) {
  const Horizon& horizon = plan.horizon;
  if (scenario.commitments.empty() && scenario.savings_plans.empty()) out << "  owned     no commitments\n";
  for (const Commitment& owned : scenario.commitments) {
    out << "  owned     " << owned.count << " x " << owned.instance_type << " in " << owned.region << ", "
        << reservation_term_name(owned.term) << ' ' << reservation_class_name(owned.offering_class) << ' '
        << upfront_payment_name(owned.payment) << ", " << format_instant(owned.start) << " to " << format_instant(owned.end())
        << ": " << standing(owned.start, owned.end(), horizon) << '\n';
  }
  // A reservation applies to the on-demand pool of its type and region only: without one it is
  // paid for and idle, which "in force" above would hide.
  for (const std::string& unused : plan.unused_reservations) {
    out << "  unused    " << unused << ": no candidate pool of the scenario (on-demand, its type, its region), so no planned instance can use it\n";
  }
  for (const SavingsPlan& owned : scenario.savings_plans) {
    out << "  owned     " << savings_plan_label(owned) << ", " << format_instant(owned.start) << " to "
        << format_instant(owned.end()) << ": " << standing(owned.start, owned.end(), horizon) << '\n';
  }
}

void print_plan(std::ostream& out, const Plan& plan, const Scenario& scenario) {
  char line[400];
  out << "Plan for " << plan.scenario << ": " << format_duration(plan.horizon.duration) << " from "
      << format_instant(plan.horizon.start) << " in steps of " << format_duration(plan.horizon.step) << ", serving the p"
      << plan.risk_quantile * 100 << " demand\n";
  for (const WorkloadForecast& forecast : plan.forecasts) {
    // The reason goes out on its own: auto's (every candidate's validation score) outgrows `line`.
    std::snprintf(line, sizeof line, "  forecast  %-20s %-15s mean p50 %s, planned peak %s", forecast.workload.c_str(),
                  forecast.forecaster.c_str(), demand_level(forecast.mean_p50).c_str(),
                  demand_level(forecast.peak_planned).c_str());
    out << line << (forecast.reason.empty() ? "" : "  - ") << forecast.reason << '\n';
  }
  print_owned_commitments(out, scenario, plan);
  print_recommended_commitments(out, plan);
  for (const PlannedGroup& group : plan.groups) {
    std::snprintf(line, sizeof line, "  group     %s: %d-%d GPUs, on-demand base %d, %d%% on-demand above it, %zu schedule changes\n",
                  group.name.c_str(), group.min_capacity, group.max_capacity, group.distribution.on_demand_base_capacity,
                  group.distribution.on_demand_percentage_above_base, group.schedule.size());
    out << line;
  }
  std::snprintf(line, sizeof line, "  cost      planned $%.2f", plan.expected.planned_cost.usd());
  out << line;
  if (plan.expected.replicas > 0) {
    std::snprintf(line, sizeof line, "; simulated over %d demand paths: p50 $%.2f, p95 $%.2f\n", plan.expected.replicas,
                  plan.expected.cost_p50_usd, plan.expected.cost_p95_usd);
    out << line;
    if (strictest_service_level(scenario)) {
      std::snprintf(line, sizeof line, "  service   %.3f%% served on average (p5 %.3f%%); SLO met in %.0f%% of the paths\n",
                    plan.expected.served_fraction_mean * 100, plan.expected.served_fraction_p5 * 100,
                    plan.expected.slo_attainment * 100);
      out << line;
    }
    if (const std::optional<double> budget = strictest_deadline_budget(scenario)) {
      std::snprintf(line, sizeof line, "  batch     %.1f jobs per path, %.2f%% missed their deadline; within the %.2f%% budget in %.0f%% of the paths\n",
                    plan.expected.jobs_mean, plan.expected.deadline_miss_fraction * 100, *budget * 100,
                    plan.expected.deadline_attainment * 100);
      out << line;
    }
  } else {
    out << "\n";
  }
  if (!plan.budget_status.empty()) out << "  budget    " << format_usd(*plan.budget) << ": " << plan.budget_status << "\n";
  for (const std::string& note : plan.notes) out << "  note: " << note << "\n";
}

// A scenario's inputs and the plan made from them.
struct PlannedScenario {
  std::unique_ptr<PlanningInputs> inputs;
  Plan plan;
};

// Loads the inputs and plans them, or prints why not and returns the exit code.
std::variant<PlannedScenario, int> load_and_plan(const PlanningArguments& arguments, std::span<const OutputFile> outputs) {
  auto loaded = load_inputs(arguments, outputs);
  if (auto* code = std::get_if<int>(&loaded)) return *code;
  PlannedScenario planned{std::move(std::get<std::unique_ptr<PlanningInputs>>(loaded)), {}};
  auto plan = make_plan(planned.inputs->scenario, *planned.inputs->prices, planned.inputs->options);
  if (!plan.ok()) {
    std::cerr << arguments.scenario << ": " << plan.status().message() << '\n';
    return exit_code_for(plan.status());
  }
  planned.plan = std::move(*plan);
  return planned;
}

int run_plan(const PlanningArguments& arguments, const std::string& out_file) {
  const OutputFile outputs[] = {{"--out", out_file}, {"--html", arguments.html_file}};
  auto planned = load_and_plan(arguments, outputs);
  if (auto* code = std::get_if<int>(&planned)) return *code;
  const PlanningInputs& inputs = *std::get<PlannedScenario>(planned).inputs;
  const Plan& plan = std::get<PlannedScenario>(planned).plan;
  const std::string document = plan_to_json(plan);
  if (int code = write_output_file(out_file, document, arguments.file_system); code != kExitOk) return code;
  if (int code = write_html_report(arguments.html_file, [&] {
        return plan_report_html(plan, &inputs.scenario, {.generated_by = report_generated_by("plan")});
      }, arguments.file_system);
      code != kExitOk) {
    return code;
  }
  if (arguments.json) {
    std::cout << document;
  } else {
    print_plan(std::cout, plan, inputs.scenario);
  }
  return kExitOk;
}

int run_commitments(const PlanningArguments& arguments) {
  auto planned = load_and_plan(arguments, {});
  if (auto* code = std::get_if<int>(&planned)) return *code;
  const PlanningInputs& inputs = *std::get<PlannedScenario>(planned).inputs;
  const Plan& plan = std::get<PlannedScenario>(planned).plan;
  std::cout << "Commitments for " << plan.scenario << ", planned over " << format_duration(plan.horizon.duration) << " from "
            << format_instant(plan.horizon.start) << " and judged over their terms\n";
  print_owned_commitments(std::cout, inputs.scenario, plan);
  print_recommended_commitments(std::cout, plan);
  return kExitOk;
}

int run_backtest(const PlanningArguments& arguments, const std::string& train_until, const std::string& plan_file,
                 const std::string& replan_every, BacktestOptions backtest) {
  auto cut = parse_instant(train_until);
  if (!cut.ok()) {
    std::cerr << "--train-until: " << cut.status().message() << '\n';
    return kExitInvalidInput;
  }
  if (!replan_every.empty()) {
    auto every = parse_duration(replan_every);
    if (!every.ok()) {
      std::cerr << "--replan-every: " << every.status().message() << '\n';
      return kExitInvalidInput;
    }
    backtest.replan_every = *every;
  }
  const OutputFile outputs[] = {{"--plan-out", plan_file}, {"--html", arguments.html_file}};
  auto loaded = load_inputs(arguments, outputs);
  if (auto* code = std::get_if<int>(&loaded)) return *code;
  PlanningInputs& inputs = *std::get<std::unique_ptr<PlanningInputs>>(loaded);
  auto result = run_plan_backtest(inputs.scenario, *inputs.prices, *cut, inputs.options, backtest);
  if (!result.ok()) {
    std::cerr << arguments.scenario << ": " << result.status().message() << '\n';
    return exit_code_for(result.status());
  }
  if (!plan_file.empty()) {
    if (int code = write_output_file(plan_file, plan_to_json(result->plan), arguments.file_system); code != kExitOk) {
      return code;
    }
  }
  if (int code = write_html_report(arguments.html_file, [&] {
        return backtest_report_html(*result, &inputs.scenario, {.generated_by = report_generated_by("backtest")});
      }, arguments.file_system);
      code != kExitOk) {
    return code;
  }
  if (arguments.json) {
    std::cout << backtest_json(*result);
    return kExitOk;
  }
  std::cout << "Backtest of " << result->plan.scenario << ": trained until " << format_instant(*cut) << ", tested over "
            << format_duration(result->plan.horizon.duration) << "\n";
  char line[300];
  for (const StrategyOutcome& strategy : result->strategies) {
    std::snprintf(line, sizeof line, "  %-22s $%12.2f  served %7.3f%%  %s", strategy.name.c_str(), strategy.cost_usd,
                  strategy.served_fraction * 100, strategy.description.c_str());
    const std::string at_max = max_capacity_note(strategy.intervals_at_max_capacity);
    std::cout << line << (at_max.empty() ? "" : "; " + at_max) << "\n";
  }
  const HindsightOptimumSolve& optimum = result->optimum;
  std::snprintf(line, sizeof line, "  hindsight optimum $%.2f (LP bound $%.2f; %s), solved in %.2f s: %d variables, %d constraints\n",
                optimum.cost_usd, optimum.lp_bound_usd,
                optimum.proven_optimal ? "proven optimal" : ("stopped at the time limit, gap " + std::to_string(optimum.gap * 100) + "%").c_str(),
                optimum.solve_seconds, optimum.variables, optimum.constraints);
  std::cout << line;
  std::cout << "  fleetcast costs " << cost_against_optimum(*result) << '\n';
  for (const BacktestReplan& replan : result->replans) {
    std::cout << "  re-planned from " << format_instant(replan.start) << (replan.drift.empty() ? "" : ": " + replan.drift) << '\n';
  }
  for (const BacktestReplan& rise : result->rises_not_replanned) {
    std::cout << "  rose above the forecast by " << format_instant(rise.start) << ", served reactively: " << rise.drift << '\n';
  }
  if (backtest.replan_on_drift && result->replans.empty()) std::cout << "  no period fell below the forecast: planned once\n";
  std::snprintf(line, sizeof line,
                "  captured %.1f%% of hindsight_reservation's saving over all on-demand (a baseline, not a bound); "
                "planning took %.2f s\n",
                result->captured_saving * 100, result->planning_seconds);
  std::cout << line;
  return kExitOk;
}

}  // namespace

void add_plan_command(CLI::App& app, int& exit_code, FileSystem* files) {
  auto arguments = std::make_shared<PlanningArguments>();
  arguments->file_system = files;
  auto out_file = std::make_shared<std::string>();
  auto* command = app.add_subcommand("plan", "Plan a scenario: reservations to buy, capacity per pool and hour, groups to export");
  add_planning_options(command, *arguments);
  command->add_option("--out", *out_file, "Write the plan document (JSON) to this file");
  guard_file_options(command, {"SCENARIO", "--model"}, {"--out", "--html"});
  command->footer("Exit status: 0 planned, 2 the scenario or an option is invalid or cannot be planned, 1 another failure.");
  command->callback([arguments, out_file, &exit_code] { exit_code = run_plan(*arguments, *out_file); });
}

void add_commitments_command(CLI::App& app, int& exit_code) {
  auto arguments = std::make_shared<PlanningArguments>();
  auto* command = app.add_subcommand(
      "commitments", "The reservations a scenario owns and those its plan buys, each judged over its whole term");
  add_forecasting_options(command, *arguments);
  arguments->replicas = 0;
  command->footer("The plan document (fleetcast plan --json) carries the same analysis.\n"
                  "Exit status: 0 done, 2 the scenario or an option is invalid or cannot be planned, 1 another failure.");
  command->callback([arguments, &exit_code] { exit_code = run_commitments(*arguments); });
}

void add_backtest_command(CLI::App& app, int& exit_code, FileSystem* files) {
  auto arguments = std::make_shared<PlanningArguments>();
  arguments->file_system = files;
  auto train_until = std::make_shared<std::string>();
  auto plan_file = std::make_shared<std::string>();
  auto backtest = std::make_shared<BacktestOptions>();
  auto* command = app.add_subcommand(
      "backtest", "Plan from the history before a cut and replay the demand that followed, beside the baselines");
  add_planning_options(command, *arguments);
  arguments->replicas = 0;
  command->add_option("--train-until", *train_until, "The cut: an instant inside the scenario's horizon (RFC 3339 UTC)")->required();
  command->add_option("--plan-out", *plan_file, "Write the plan the fleet followed to this file: made at the cut, or with "
                      "--replan-every or --replan-on-drift each re-plan's intervals until the next");
  auto replan_every = std::make_shared<std::string>();
  command->add_option("--replan-every", *replan_every,
                      "Re-plan every this long (whole steps, such as 1d), as a team running the planner daily would: each "
                      "re-plan forecasts from the history up to it, at the risk the first plan chose, owning its "
                      "reservations and buying none (default: plan once, at the cut)");
  command->add_flag("--replan-on-drift", backtest->replan_on_drift,
                    "Re-plan at a period's start (--replan-every, or a day) only where a service's demand over the period "
                    "before fell below the forecast's band in " + text::format_fixed(kDriftMissShare * 100, 0) +
                        "% of its intervals or more, the level more than " + text::format_fixed(kDriftLevelError * 100, 0) +
                        "% under its median's (a rise is served by the plan's reactive part)");
  guard_file_options(command, {"SCENARIO", "--model"}, {"--plan-out", "--html"});
  command->add_option("--optimum-time-limit", backtest->optimum_time_limit_seconds,
                      "Wall-clock seconds the hindsight optimum may take (its LP relaxation, then its MILP search); past them its gap is reported")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->footer("Exit status: 0 done, 2 the scenario or an option is invalid, 1 another failure.");
  command->callback([arguments, train_until, plan_file, replan_every, backtest, &exit_code] {
    exit_code = run_backtest(*arguments, *train_until, *plan_file, *replan_every, *backtest);
  });
}

}  // namespace fleetcast::cli
