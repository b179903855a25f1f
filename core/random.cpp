#include "core/random.h"

#include <cmath>

#include "core/hash.h"

namespace fleetcast {

namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  state += 0x9E3779B97F4A7C15ULL;
  std::uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

RandomStream::RandomStream(std::uint64_t seed) {
  for (auto& word : state_) word = splitmix64(seed);
}

RandomStream RandomStream::for_purpose(std::uint64_t seed, std::string_view purpose, std::uint64_t replica) {
  // Mix each component through splitmix so nearby seeds and replicas give unrelated streams.
  std::uint64_t mixer = seed;
  std::uint64_t derived = splitmix64(mixer);
  mixer = derived ^ Fnv1a64().add(purpose).value();
  derived = splitmix64(mixer);
  mixer = derived ^ (replica * 0xD1B54A32D192ED03ULL);
  return RandomStream(splitmix64(mixer));
}

std::uint64_t RandomStream::next() {
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

double RandomStream::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

std::uint64_t RandomStream::below(std::uint64_t bound) {
  __extension__ typedef unsigned __int128 UInt128;
  std::uint64_t x = next();
  UInt128 product = static_cast<UInt128>(x) * bound;
  auto low = static_cast<std::uint64_t>(product);
  if (low < bound) {
    const std::uint64_t threshold = -bound % bound;
    while (low < threshold) {
      x = next();
      product = static_cast<UInt128>(x) * bound;
      low = static_cast<std::uint64_t>(product);
    }
  }
  return static_cast<std::uint64_t>(product >> 64);
}

bool RandomStream::bernoulli(double p) { return uniform() < p; }

double RandomStream::exponential(double rate) {
  // 1 - u is in (0, 1], so the logarithm is finite.
  return -std::log1p(-uniform()) / rate;
}

double RandomStream::normal(double mean, double stddev) {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return mean + stddev * spare_normal_;
  }
  double u = 0;
  double v = 0;
  double s = 0;
  do {
    u = 2 * uniform() - 1;
    v = 2 * uniform() - 1;
    s = u * u + v * v;
  } while (s >= 1 || s == 0);
  const double factor = std::sqrt(-2 * std::log(s) / s);
  spare_normal_ = v * factor;
  has_spare_normal_ = true;
  return mean + stddev * u * factor;
}

double RandomStream::lognormal(double mu, double sigma) { return std::exp(normal(mu, sigma)); }

std::int64_t RandomStream::poisson(double mean) {
  if (mean <= 0) return 0;
  if (mean < 30) {
    const double limit = std::exp(-mean);
    std::int64_t count = 0;
    double product = uniform();
    while (product > limit) {
      ++count;
      product *= uniform();
    }
    return count;
  }
  // PTRS (Hormann, "The transformed rejection method for generating Poisson random variables").
  const double log_mean = std::log(mean);
  const double b = 0.931 + 2.53 * std::sqrt(mean);
  const double a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
  const double v_r = 0.9277 - 3.6224 / (b - 2);
  while (true) {
    const double u = uniform() - 0.5;
    const double v = uniform();
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + mean + 0.43);
    if (us >= 0.07 && v <= v_r) return static_cast<std::int64_t>(k);
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <= -mean + k * log_mean - std::lgamma(k + 1)) {
      return static_cast<std::int64_t>(k);
    }
  }
}

}  // namespace fleetcast
