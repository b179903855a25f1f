#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "core/random.h"
#include "engine/batch_jobs.h"

using namespace fleetcast;

namespace {

BatchWorkload training_jobs(double arrivals_per_day) {
  BatchWorkload batch;
  batch.arrivals_per_day = arrivals_per_day;
  batch.gpus_per_job = 8;
  batch.work = 6 * kHour;
  batch.checkpoint_interval = 30 * kMinute;
  batch.deadline = 2 * kDay;
  return batch;
}

const Horizon kLongHorizon{*parse_instant("2026-01-05T00:00:00Z"), 1000 * kDay, kHour};

std::vector<engine::BatchJob> jobs_of(const BatchWorkload& batch, const Horizon& horizon, std::uint64_t seed) {
  RandomStream arrivals = RandomStream::for_purpose(seed, "batch_arrivals");
  return engine::generate_batch_jobs(batch, horizon, arrivals);
}

}  // namespace

TEST_CASE("engine::generate_batch_jobs arrives as a Poisson process of the given rate", "[engine]") {
  // 24 a day over 1000 days: Poisson with mean 24,000 and standard deviation sqrt(24,000) = 155.
  const auto jobs = jobs_of(training_jobs(24), kLongHorizon, 1);
  const double expected = 24.0 * 1000;
  CHECK(std::abs(static_cast<double>(jobs.size()) - expected) < 5 * std::sqrt(expected));
  // Inter-arrival times are exponential with mean 3600 s: standard error 3600 / sqrt(n) for the
  // mean, and a coefficient of variation of 1 (its standard error is about sqrt(2 / n)).
  const auto n = static_cast<double>(jobs.size() - 1);
  double sum = 0;
  double sum_squares = 0;
  for (std::size_t i = 1; i < jobs.size(); ++i) {
    const auto gap = static_cast<double>((jobs[i].arrival - jobs[i - 1].arrival).count());
    sum += gap;
    sum_squares += gap * gap;
  }
  const double mean = sum / n;
  const double stddev = std::sqrt(sum_squares / n - mean * mean);
  CHECK(std::abs(mean - 3600) < 5 * 3600 / std::sqrt(n));
  CHECK(std::abs(stddev / mean - 1) < 5 * std::sqrt(2 / n));
}

TEST_CASE("engine::generate_batch_jobs gives each job the workload's shape, in arrival order", "[engine]") {
  const auto jobs = jobs_of(training_jobs(50), Horizon{kLongHorizon.start, 30 * kDay, kHour}, 2);
  REQUIRE_FALSE(jobs.empty());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    CAPTURE(i);
    CHECK(jobs[i].id == static_cast<std::int64_t>(i));
    CHECK(jobs[i].arrival >= Seconds{0});
    CHECK(jobs[i].arrival < 30 * kDay);
    if (i > 0) CHECK(jobs[i].arrival >= jobs[i - 1].arrival);
    CHECK(jobs[i].gpus == 8);
    CHECK(jobs[i].work == 6 * kHour);
    CHECK(jobs[i].checkpoint_interval == 30 * kMinute);
    CHECK(jobs[i].deadline == jobs[i].arrival + 2 * kDay);
  }
}

TEST_CASE("engine::generate_batch_jobs is deterministic for a seed and empty at rate zero", "[engine]") {
  const Horizon horizon{kLongHorizon.start, 30 * kDay, kHour};
  CHECK(jobs_of(training_jobs(10), horizon, 3) == jobs_of(training_jobs(10), horizon, 3));
  CHECK(jobs_of(training_jobs(10), horizon, 3) != jobs_of(training_jobs(10), horizon, 4));
  CHECK(jobs_of(training_jobs(0), horizon, 3).empty());
}
