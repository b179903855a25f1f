// The process's peak resident memory, for benchmarks that state what a size costs in memory.
#pragma once

#include <sys/resource.h>

namespace fleetcast::bench {

/// Peak resident set size of this process so far, in MiB (getrusage; Linux reports KiB).
inline double peak_resident_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

}  // namespace fleetcast::bench
