#include "engine/batch_jobs.h"

#include <cmath>

namespace fleetcast::engine {

std::vector<BatchJob> generate_batch_jobs(const BatchWorkload& batch, const Horizon& horizon, RandomStream& arrivals) {
  std::vector<BatchJob> jobs;
  if (batch.arrivals_per_day <= 0) return jobs;
  const double rate_per_second = batch.arrivals_per_day / static_cast<double>(kDay.count());
  const double end = static_cast<double>(horizon.duration.count());
  for (double t = arrivals.exponential(rate_per_second); t < end; t += arrivals.exponential(rate_per_second)) {
    const Seconds arrival{static_cast<std::int64_t>(std::floor(t))};
    jobs.push_back(BatchJob{static_cast<std::int64_t>(jobs.size()), arrival, batch.gpus_per_job, batch.work,
                            batch.checkpoint_interval, arrival + batch.deadline});
  }
  return jobs;
}

}  // namespace fleetcast::engine
