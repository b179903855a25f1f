// Deterministic random streams with our own distribution code.
//
// One seed per scenario; each purpose (demand noise, spot interruptions, launch delays, weight
// initialisation, ...) gets its own independent stream, derived from the seed, the purpose's name
// and the replica index, so adding draws to one purpose never shifts another, and replica k gives
// the same numbers whatever thread or process runs it. The generator is xoshiro256** seeded through
// splitmix64; the distributions are implemented here because the standard library's differ
// between implementations.
//
// Thread-safety: a RandomStream is a value type owned by one thread at a time.
#pragma once

#include <cstdint>
#include <string_view>

namespace fleetcast {

class RandomStream {
 public:
  /// A stream from a raw 64-bit seed.
  explicit RandomStream(std::uint64_t seed);
  /// The stream for one purpose of one replica of a seeded run.
  static RandomStream for_purpose(std::uint64_t seed, std::string_view purpose, std::uint64_t replica = 0);

  /// 64 uniformly random bits.
  std::uint64_t next();
  /// Uniform in [0, 1) with 53 random bits.
  double uniform();
  /// Uniform integer in [0, bound) without modulo bias (Lemire's method); bound > 0.
  std::uint64_t below(std::uint64_t bound);
  /// true with probability p (p outside [0, 1] is clamped).
  bool bernoulli(double p);
  /// Exponential with the given rate (> 0): mean 1 / rate.
  double exponential(double rate);
  /// Normal with the given mean and standard deviation (Marsaglia's polar method).
  double normal(double mean, double stddev);
  /// Log-normal whose underlying normal has parameters mu and sigma.
  double lognormal(double mu, double sigma);
  /// Poisson with the given mean (>= 0): Knuth's product method below 30, else the PTRS
  /// transformed-rejection method (Hormann 1993), exact for every mean.
  std::int64_t poisson(double mean);

 private:
  std::uint64_t state_[4];
  double spare_normal_ = 0;
  bool has_spare_normal_ = false;
};

}  // namespace fleetcast
