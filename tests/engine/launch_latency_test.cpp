#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/random.h"
#include "engine/launch_latency.h"

using namespace fleetcast;

namespace {

InstanceType type_of(std::string provider, std::string name, int gpus) {
  InstanceType type;
  type.provider = std::move(provider);
  type.name = std::move(name);
  type.gpu_count = gpus;
  return type;
}

std::vector<Seconds> draws(const InstanceType& type, PurchaseOption option, int n, std::uint64_t seed) {
  RandomStream stream = RandomStream::for_purpose(seed, "launch_delays");
  std::vector<Seconds> samples;
  samples.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) samples.push_back(engine::sample_launch_latency(type, option, stream));
  return samples;
}

double sample_median(std::vector<Seconds> samples) {
  const auto middle = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
  std::nth_element(samples.begin(), middle, samples.end());
  return static_cast<double>(middle->count());
}

}  // namespace

TEST_CASE("engine::median_launch_latency follows the documented table", "[engine]") {
  CHECK(engine::median_launch_latency(type_of("aws", "g5.xlarge", 1)) == Seconds{75});
  CHECK(engine::median_launch_latency(type_of("aws", "g6e.12xlarge", 4)) == Seconds{90});
  CHECK(engine::median_launch_latency(type_of("aws", "p3.2xlarge", 1)) == Seconds{120});
  CHECK(engine::median_launch_latency(type_of("aws", "p4d.24xlarge", 8)) == Seconds{270});
  CHECK(engine::median_launch_latency(type_of("aws", "p5.48xlarge", 8)) == Seconds{300});
  // Families not in the table, and other providers, go by GPU count.
  CHECK(engine::median_launch_latency(type_of("aws", "trn1.32xlarge", 16)) == Seconds{270});
  CHECK(engine::median_launch_latency(type_of("gcp", "g2-standard-4", 1)) == Seconds{90});
  CHECK(engine::median_launch_latency(type_of("gcp", "a2-highgpu-4g", 4)) == Seconds{150});
  CHECK(engine::median_launch_latency(type_of("azure", "Standard_ND96isr_H100_v5", 8)) == Seconds{270});
  CHECK(engine::median_launch_latency(type_of("aws", "g6f.large", 0)) == Seconds{75});
}

TEST_CASE("engine::sample_launch_latency has the documented median", "[engine]") {
  // The sample median of 100,000 log-normal draws has a relative standard error of about
  // sigma * sqrt(pi / 2) / sqrt(n) = 0.14%, so 2% is far outside chance.
  constexpr int n = 100000;
  for (const auto& type : {type_of("aws", "g5.xlarge", 1), type_of("aws", "p5.48xlarge", 8),
                           type_of("gcp", "a2-highgpu-4g", 4)}) {
    CAPTURE(type.name);
    const double median = static_cast<double>(engine::median_launch_latency(type).count());
    CHECK(sample_median(draws(type, PurchaseOption::on_demand, n, 1)) == Approx(median).epsilon(0.02));
    // A spot launch adds the request delay.
    CHECK(sample_median(draws(type, PurchaseOption::spot, n, 2)) ==
          Approx(median + static_cast<double>(engine::kSpotRequestDelay.count())).epsilon(0.02));
  }
}

TEST_CASE("engine::sample_launch_latency spreads log-normally with sigma 0.35", "[engine]") {
  constexpr int n = 100000;
  const auto samples = draws(type_of("aws", "p5.48xlarge", 8), PurchaseOption::reserved, n, 3);
  double sum = 0;
  double sum_squares = 0;
  for (const Seconds sample : samples) {
    REQUIRE(sample >= Seconds{1});
    const double log_sample = std::log(static_cast<double>(sample.count()));
    sum += log_sample;
    sum_squares += log_sample * log_sample;
  }
  const double mean = sum / n;
  const double stddev = std::sqrt(sum_squares / n - mean * mean);
  // Standard error of a normal sample's sd: sigma / sqrt(2n) = 0.0008; whole-second rounding of
  // values near 300 s adds well under that.
  CHECK(std::abs(stddev - engine::kLaunchLatencySigma) < 5 * engine::kLaunchLatencySigma / std::sqrt(2.0 * n));
  CHECK(std::abs(mean - std::log(300.0)) < 5 * engine::kLaunchLatencySigma / std::sqrt(1.0 * n));
}

TEST_CASE("engine::sample_launch_latency is deterministic for a seed", "[engine]") {
  const InstanceType type = type_of("aws", "g6.xlarge", 1);
  CHECK(draws(type, PurchaseOption::spot, 100, 5) == draws(type, PurchaseOption::spot, 100, 5));
  CHECK(draws(type, PurchaseOption::spot, 100, 5) != draws(type, PurchaseOption::spot, 100, 6));
}
