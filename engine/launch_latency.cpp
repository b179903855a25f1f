#include "engine/launch_latency.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <utility>

namespace fleetcast::engine {

namespace {

struct FamilyMedian {
  std::string_view family;
  Seconds median;
};

constexpr std::array<FamilyMedian, 17> kAwsFamilyMedians{{
    {"g4dn", Seconds{75}},  {"g4ad", Seconds{75}},  {"g5", Seconds{75}},     {"g5g", Seconds{75}},
    {"g6", Seconds{75}},    {"g6f", Seconds{75}},   {"gr6", Seconds{75}},    {"g6e", Seconds{90}},
    {"p2", Seconds{120}},   {"p3", Seconds{120}},   {"p3dn", Seconds{180}},  {"p4d", Seconds{270}},
    {"p4de", Seconds{270}}, {"p5", Seconds{300}},   {"p5e", Seconds{300}},   {"p5en", Seconds{300}},
    {"p6-b200", Seconds{300}},
}};

Seconds median_by_gpu_count(int gpu_count) {
  if (gpu_count <= 1) return Seconds{90};
  if (gpu_count <= 4) return Seconds{150};
  return Seconds{270};
}

}  // namespace

Seconds median_launch_latency(const InstanceType& type) {
  if (type.provider == "aws") {
    const std::string_view family = instance_family(type.name);
    const auto* known = std::find_if(kAwsFamilyMedians.begin(), kAwsFamilyMedians.end(),
                                     [&](const FamilyMedian& entry) { return entry.family == family; });
    if (known != kAwsFamilyMedians.end()) return known->median;
  }
  return median_by_gpu_count(type.gpu_count);
}

Seconds launch_lead(Seconds median, PurchaseOption option) {
  constexpr double kZ99 = 2.3263478740408408;  // the standard normal's 0.99 quantile
  static_assert(kLaunchLeadQuantile == 0.99, "kZ99 is the quantile's z");
  const double quantile = static_cast<double>(median.count()) * std::exp(kLaunchLatencySigma * kZ99);
  std::int64_t seconds = static_cast<std::int64_t>(std::ceil(quantile));
  if (option == PurchaseOption::spot) seconds += kSpotRequestDelay.count();
  return Seconds{(seconds + 59) / 60 * 60};
}

Seconds sample_launch_latency(const InstanceType& type, PurchaseOption option, RandomStream& launch_delays) {
  return sample_launch_latency(median_launch_latency(type), option, launch_delays);
}

Seconds sample_launch_latency(Seconds median_latency, PurchaseOption option, RandomStream& launch_delays) {
  const auto median = static_cast<double>(median_latency.count());
  const double drawn = launch_delays.lognormal(std::log(median), kLaunchLatencySigma);
  const Seconds running{std::max<std::int64_t>(1, std::llround(drawn))};
  return option == PurchaseOption::spot ? running + kSpotRequestDelay : running;
}

}  // namespace fleetcast::engine
