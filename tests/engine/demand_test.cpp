#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>
#include <vector>

#include "core/random.h"
#include "engine/demand.h"

using namespace fleetcast;

namespace {

// 2026-01-05 is a Monday (2026-01-01 was a Thursday).
const Instant kMonday = *parse_instant("2026-01-05T00:00:00Z");

Workload service_workload(Demand demand) {
  Workload workload;
  workload.name = "web";
  ServiceWorkload service;
  service.demand = std::move(demand);
  workload.spec = service;
  return workload;
}

Workload generated(const DemandGenerator& generator) { return service_workload(Demand{DemandUnit::gpus, generator}); }

// A trace whose first sample sits at `origin`, `step` apart.
Workload traced(Instant origin, Seconds step, std::vector<double> values) {
  DemandTrace trace;
  trace.file = "load/web.csv";
  trace.origin = origin;
  trace.series.step = step;
  trace.series.values = std::move(values);
  return service_workload(Demand{DemandUnit::gpus, trace});
}

Result<std::vector<double>> demand_of(const Workload& workload, const Horizon& horizon, std::uint64_t seed = 1) {
  RandomStream noise = RandomStream::for_purpose(seed, "demand_noise");
  return engine::demand_per_interval(workload, std::get<ServiceWorkload>(workload.spec), horizon, noise);
}

}  // namespace

TEST_CASE("engine::demand_per_interval follows the daily cosine and the weekend factor", "[engine]") {
  DemandGenerator generator;
  generator.base = 10;
  generator.daily_amplitude = 0.5;
  generator.peak_hour_utc = 14;
  generator.weekend_factor = 0.5;
  const auto values = demand_of(generated(generator), Horizon{kMonday, kWeek, kHour});
  REQUIRE(values.ok());
  REQUIRE(values->size() == 168);
  // Monday 14:00, the peak: 10 * (1 + 0.5).
  CHECK((*values)[14] == Approx(15.0));
  // Monday 02:00, twelve hours from the peak: 10 * (1 - 0.5).
  CHECK((*values)[2] == Approx(5.0));
  // Monday 08:00, six hours before the peak: cos(-pi/2) = 0.
  CHECK((*values)[8] == Approx(10.0));
  // Friday 23:00 is a weekday: 10 * (1 + 0.5 * cos(3 pi / 4)) = 10 - 2.5 * sqrt(2).
  CHECK((*values)[4 * 24 + 23] == Approx(10 - 2.5 * std::sqrt(2.0)));
  // Saturday 14:00 and Sunday 02:00 carry the weekend factor.
  CHECK((*values)[5 * 24 + 14] == Approx(7.5));
  CHECK((*values)[6 * 24 + 2] == Approx(2.5));
}

TEST_CASE("engine::demand_per_interval uses fractional hours on sub-hourly steps", "[engine]") {
  DemandGenerator generator;
  generator.base = 10;
  generator.daily_amplitude = 0.5;
  generator.peak_hour_utc = 14;
  const auto values = demand_of(generated(generator), Horizon{kMonday, kDay, Seconds{900}});
  REQUIRE(values.ok());
  // 14:30 is half an hour past the peak: 10 * (1 + 0.5 * cos(2 pi * 0.5 / 24)).
  CHECK((*values)[14 * 4 + 2] == Approx(10 * (1 + 0.5 * std::cos(std::numbers::pi / 24))));
}

TEST_CASE("engine::demand_per_interval applies the trend per day since the horizon start", "[engine]") {
  DemandGenerator generator;
  generator.base = 100;
  generator.trend_per_day = 0.1;
  const auto values = demand_of(generated(generator), Horizon{kMonday, Seconds{4 * 86400}, kHour});
  REQUIRE(values.ok());
  CHECK((*values)[0] == Approx(100.0));
  CHECK((*values)[12] == Approx(105.0));  // half a day: 100 * (1 + 0.1 * 0.5)
  CHECK((*values)[72] == Approx(130.0));  // three days
}

TEST_CASE("engine::demand_per_interval clamps a falling trend at zero", "[engine]") {
  DemandGenerator generator;
  generator.base = 10;
  generator.trend_per_day = -0.5;  // reaches zero after two days
  const auto values = demand_of(generated(generator), Horizon{kMonday, Seconds{3 * 86400}, kDay});
  REQUIRE(values.ok());
  CHECK((*values)[1] == Approx(5.0));
  CHECK((*values)[2] == 0.0);
}

TEST_CASE("engine::demand_per_interval spends the Poisson share of time in spikes", "[engine]") {
  DemandGenerator generator;
  generator.base = 1;
  generator.spikes_per_day = 2;
  generator.spike_magnitude = 3;
  generator.spike_duration = Seconds{1800};
  const Seconds duration = 20000 * kDay;
  const auto values = demand_of(generated(generator), Horizon{kMonday, duration, Seconds{900}});
  REQUIRE(values.ok());
  std::int64_t in_spike = 0;
  for (const double value : *values) {
    REQUIRE((value == Approx(1.0) || value == Approx(3.0)));
    if (value > 2) ++in_spike;
  }
  const double share = static_cast<double>(in_spike) / static_cast<double>(values->size());
  // A point lies in a spike when one started in the preceding 30 min: 1 - exp(-rate * duration),
  // with rate * duration = 2/day * 1/48 day = 1/24 (so about 4%). The covered time is about a
  // sum of Poisson(rate * T) spikes of length d, so its share has a standard deviation of about
  // d * sqrt(rate / T) = (1/48) * sqrt(2 / 20000).
  const double expected = 1 - std::exp(-1.0 / 24);
  const double standard_deviation = (1.0 / 48) * std::sqrt(2.0 / 20000);
  CHECK(std::abs(share - expected) < 5 * standard_deviation);
}

TEST_CASE("engine::demand_per_interval noise has mean one and the given spread", "[engine]") {
  DemandGenerator generator;
  generator.base = 50;
  generator.noise = 0.2;
  const auto values = demand_of(generated(generator), Horizon{kMonday, 1000 * kDay, kHour});
  REQUIRE(values.ok());
  const auto n = static_cast<double>(values->size());
  double sum = 0;
  double sum_squares = 0;
  for (const double value : *values) {
    sum += value;
    sum_squares += value * value;
  }
  const double mean = sum / n;
  const double stddev = std::sqrt(sum_squares / n - mean * mean);
  // 50 * max(0, 1 + 0.2 Z): the clamp is 5 standard deviations away, so mean 50, sd 10.
  CHECK(std::abs(mean - 50) < 5 * 10 / std::sqrt(n));
  CHECK(std::abs(stddev - 10) < 5 * 10 / std::sqrt(2 * n));  // standard error of a normal sample sd
}

TEST_CASE("engine::demand_per_interval is deterministic for a seed", "[engine]") {
  DemandGenerator generator;
  generator.base = 20;
  generator.daily_amplitude = 0.3;
  generator.noise = 0.1;
  generator.spikes_per_day = 1;
  generator.spike_magnitude = 2;
  generator.spike_duration = kHour;
  const Workload workload = generated(generator);
  const Horizon horizon{kMonday, 30 * kDay, Seconds{300}};
  const auto first = demand_of(workload, horizon, 7);
  const auto again = demand_of(workload, horizon, 7);
  const auto other = demand_of(workload, horizon, 8);
  REQUIRE(first.ok());
  REQUIRE(again.ok());
  REQUIRE(other.ok());
  CHECK(*first == *again);
  CHECK(*first != *other);
}

TEST_CASE("engine::demand_per_interval averages a finer trace over each interval", "[engine]") {
  SECTION("steps that divide: four 15-minute samples per hour") {
    const auto values = demand_of(traced(kMonday, Seconds{900}, {1, 2, 3, 4, 5, 6, 7, 8}),
                                  Horizon{kMonday, 2 * kHour, kHour});
    REQUIRE(values.ok());
    CHECK(*values == std::vector<double>{2.5, 6.5});
  }
  SECTION("steps that do not divide: samples at 0, 20 and 40 min, intervals of 30 min") {
    const auto values = demand_of(traced(kMonday, Seconds{1200}, {1, 2, 4}), Horizon{kMonday, kHour, Seconds{1800}});
    REQUIRE(values.ok());
    CHECK(*values == std::vector<double>{1.5, 4});
  }
}

TEST_CASE("engine::demand_per_interval holds a coarser or equal trace's sample", "[engine]") {
  SECTION("two-hour samples on an hourly horizon") {
    const auto values = demand_of(traced(kMonday, 2 * kHour, {10, 20, 30}), Horizon{kMonday, 6 * kHour, kHour});
    REQUIRE(values.ok());
    CHECK(*values == std::vector<double>{10, 10, 20, 20, 30, 30});
  }
  SECTION("a trace that starts an hour before the horizon") {
    const auto values =
        demand_of(traced(kMonday - kHour, 2 * kHour, {10, 20, 30}), Horizon{kMonday, 5 * kHour, kHour});
    REQUIRE(values.ok());
    CHECK(*values == std::vector<double>{10, 20, 20, 30, 30});
  }
  SECTION("equal steps") {
    const auto values = demand_of(traced(kMonday, kHour, {1, 2, 3}), Horizon{kMonday, 3 * kHour, kHour});
    REQUIRE(values.ok());
    CHECK(*values == std::vector<double>{1, 2, 3});
  }
}

TEST_CASE("engine::demand_per_interval refuses a trace that does not cover the horizon", "[engine]") {
  SECTION("ends before the horizon") {
    const auto values = demand_of(traced(kMonday, kHour, {1, 2, 3}), Horizon{kMonday, 4 * kHour, kHour});
    REQUIRE_FALSE(values.ok());
    CHECK(values.status().code() == StatusCode::failed_precondition);
    const std::string message = values.status().message();
    CHECK_THAT(message, Catch::Contains("workload 'web'"));
    CHECK_THAT(message, Catch::Contains("load/web.csv"));
    CHECK_THAT(message, Catch::Contains("covers 2026-01-05T00:00:00Z to 2026-01-05T03:00:00Z"));
    CHECK_THAT(message, Catch::Contains("needs 2026-01-05T00:00:00Z to 2026-01-05T04:00:00Z"));
  }
  SECTION("starts after the horizon") {
    const auto values = demand_of(traced(kMonday + kHour, kHour, {1, 2, 3, 4}), Horizon{kMonday, 3 * kHour, kHour});
    REQUIRE_FALSE(values.ok());
    CHECK(values.status().code() == StatusCode::failed_precondition);
    CHECK_THAT(values.status().message(), Catch::Contains("covers 2026-01-05T01:00:00Z"));
  }
}
