// scenario_summary (fleetcast/scenario.h): a readable description of a validated scenario, what
// `fleetcast validate --summary` prints.
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <sstream>
#include <string>

#include "fleetcast/scenario.h"

namespace fleetcast {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

/// "1 region", "2 regions".
std::string count_of(std::size_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

std::string demand_text(const Demand& demand) {
  const std::string unit = demand.unit == DemandUnit::gpus ? "GPUs" : "requests/s";
  if (const auto* trace = std::get_if<DemandTrace>(&demand.source)) {
    const auto& values = trace->series.values;
    const auto [min, max] = std::minmax_element(values.begin(), values.end());
    const double mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    return "replayed from " + trace->file.filename().string() + " (" + std::to_string(values.size()) +
           " samples every " + format_duration(trace->series.step) + ", " + unit + " min " + number(*min) +
           ", mean " + number(mean) + ", max " + number(*max) + ")";
  }
  const auto& generator = std::get<DemandGenerator>(demand.source);
  std::string text = "generated around " + number(generator.base) + " " + unit;
  if (generator.daily_amplitude > 0) {
    text += ", daily swing +-" + number(generator.daily_amplitude * 100) + "% peaking at " +
            std::to_string(generator.peak_hour_utc) + ":00 UTC";
  }
  if (generator.weekend_factor != 1) text += ", weekends x" + number(generator.weekend_factor);
  if (generator.trend_per_day != 0) text += ", trend " + number(generator.trend_per_day * 100) + "%/day";
  if (generator.noise > 0) text += ", noise " + number(generator.noise * 100) + "%";
  if (generator.spikes_per_day > 0) {
    text += ", " + number(generator.spikes_per_day) + " spikes/day of x" + number(generator.spike_magnitude) +
            " for " + format_duration(generator.spike_duration);
  }
  return text;
}

}  // namespace

std::string scenario_summary(const Scenario& s) {
  std::ostringstream out;
  out << "Scenario " << s.name << " (" << s.source_file.string() << ")\n";
  if (!s.description.empty()) out << "  " << s.description << "\n";
  out << "  horizon     " << format_instant(s.horizon.start) << " for " << format_duration(s.horizon.duration)
      << " in steps of " << format_duration(s.horizon.step) << " (" << s.horizon.intervals() << " intervals)\n";
  out << "  seed        " << s.seed << "\n";
  out << "  pricing     " << (s.pricing.database ? "database " + s.pricing.database->string() : "built-in catalog")
      << ", provider " << s.pricing.provider << ", regions " << join(s.pricing.regions) << "\n";
  std::vector<std::string> options;
  for (PurchaseOption option : s.purchase_options) options.emplace_back(purchase_option_name(option));
  out << "  pools       " << count_of(s.instance_types.size(), "instance type") << " x "
      << count_of(s.pricing.regions.size(), "region") << " x " << count_of(s.purchase_options.size(), "option")
      << " = " << count_of(s.instance_types.size() * s.pricing.regions.size() * s.purchase_options.size(), "candidate pool")
      << "\n";
  out << "              types: " << join(s.instance_types) << "; options: " << join(options) << "\n";
  out << "  workloads   " << s.workloads.size() << "\n";
  for (const auto& workload : s.workloads) {
    const std::string models = workload.gpu.gpu_models.empty() ? "any GPU" : join(workload.gpu.gpu_models);
    if (const auto* service = std::get_if<ServiceWorkload>(&workload.spec)) {
      out << "    - " << workload.name << ": service on " << models << "\n"
          << "      demand " << demand_text(service->demand) << "\n"
          << "      SLO: target utilisation " << number(service->target_utilisation * 100)
          << "%, at most " << number(service->max_unserved_fraction * 100) << "% unserved\n";
    } else {
      const auto& batch = std::get<BatchWorkload>(workload.spec);
      out << "    - " << workload.name << ": batch on " << models << "\n"
          << "      " << number(batch.arrivals_per_day) << " jobs/day of " << batch.gpus_per_job << " GPUs x "
          << format_duration(batch.work) << ", checkpoint every " << format_duration(batch.checkpoint_interval)
          << ", deadline " << format_duration(batch.deadline) << ", miss budget "
          << number(batch.deadline_miss_budget * 100) << "%\n";
    }
  }
  out << "  commitments " << s.commitments.size() << "\n";
  for (const auto& c : s.commitments) {
    out << "    - " << c.count << " x " << c.instance_type << " in " << c.region << ", "
        << reservation_term_name(c.term) << " " << reservation_class_name(c.offering_class) << " "
        << upfront_payment_name(c.payment) << ", " << format_instant(c.start) << " to " << format_instant(c.end())
        << "\n";
  }
  out << "  spot        " << (s.spot.allowed ? "allowed" : "not allowed");
  if (s.spot.allowed) {
    out << ", at most " << number(s.spot.max_share_per_pool_percent) << "% per pool, interruptions from "
        << (s.spot.interruption_model == InterruptionModel::advisor ? "the Spot Advisor bucket"
                                                                    : "trace " + s.spot.interruption_trace.string());
  }
  out << "\n  policy      " << policy_kind_name(s.policy.kind) << ", on-demand base "
      << s.policy.distribution.on_demand_base_capacity << " GPUs, " << s.policy.distribution.on_demand_percentage_above_base
      << "% on-demand above base, spot strategy "
      << spot_allocation_strategy_name(s.policy.distribution.spot_allocation_strategy) << "\n";
  return out.str();
}

}  // namespace fleetcast
