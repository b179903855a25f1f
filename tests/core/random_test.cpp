#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <vector>

#include "core/random.h"

using namespace fleetcast;

namespace {

// Sample mean and variance of n draws.
template <typename Draw>
std::pair<double, double> moments(int n, Draw draw) {
  double sum = 0;
  double sum_squares = 0;
  for (int i = 0; i < n; ++i) {
    const double x = draw();
    sum += x;
    sum_squares += x * x;
  }
  const double mean = sum / n;
  return {mean, sum_squares / n - mean * mean};
}

}  // namespace

TEST_CASE("core::RandomStream gives the same numbers for the same seed, purpose and replica", "[core]") {
  RandomStream a = RandomStream::for_purpose(42, "spot_interruptions", 3);
  RandomStream b = RandomStream::for_purpose(42, "spot_interruptions", 3);
  for (int i = 0; i < 100; ++i) CHECK(a.next() == b.next());
  // Other purposes, replicas and seeds give other streams.
  RandomStream c = RandomStream::for_purpose(42, "launch_delays", 3);
  RandomStream d = RandomStream::for_purpose(42, "spot_interruptions", 4);
  RandomStream e = RandomStream::for_purpose(43, "spot_interruptions", 3);
  RandomStream f = RandomStream::for_purpose(42, "spot_interruptions", 3);
  const std::uint64_t first = f.next();
  CHECK(c.next() != first);
  CHECK(d.next() != first);
  CHECK(e.next() != first);
}

TEST_CASE("core::RandomStream matches the reference xoshiro256** sequence", "[core]") {
  // Seed 0 through splitmix64 gives the state e220a8397b1dcdaf, 6e789e6aa1b965f4, 06c45d188009454f,
  // f88bb8a8724c81ec (Vigna's published splitmix64 outputs). The ten outputs below were computed
  // independently in Python from Vigna's xoshiro256starstar.c (result = rotl(s1 * 5, 7) * 9;
  // t = s1 << 17; s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 45)), with
  // arithmetic mod 2^64; a sequence, so the state update is checked as well as the output.
  constexpr std::uint64_t kExpected[] = {
      0x99EC5F36CB75F2B4ULL, 0xBF6E1F784956452AULL, 0x1A5F849D4933E6E0ULL, 0x6AA594F1262D2D2CULL,
      0xBBA5AD4A1F842E59ULL, 0xFFEF8375D9EBCACAULL, 0x6C160DEED2F54C98ULL, 0x8920AD648FC30A3FULL,
      0xDB032C0BA7539731ULL, 0xEB3A475A3E749A3DULL,
  };
  RandomStream stream(0);
  for (std::size_t i = 0; i < std::size(kExpected); ++i) {
    INFO("output " << i);
    CHECK(stream.next() == kExpected[i]);
  }
}

// Tolerances: 5 standard errors of the estimate for n draws, so a correct generator fails with
// probability below 1e-6 (and the seed is fixed, so the test is deterministic anyway).
TEST_CASE("core::RandomStream distributions have the right mean and variance", "[core]") {
  constexpr int n = 200000;
  RandomStream stream = RandomStream::for_purpose(7, "moments");
  SECTION("uniform: mean 1/2, variance 1/12") {
    auto [mean, variance] = moments(n, [&] { return stream.uniform(); });
    CHECK(std::abs(mean - 0.5) < 5 * std::sqrt(1.0 / 12 / n));
    CHECK(std::abs(variance - 1.0 / 12) < 0.002);
  }
  SECTION("exponential with rate 4: mean 1/4, variance 1/16") {
    auto [mean, variance] = moments(n, [&] { return stream.exponential(4); });
    CHECK(std::abs(mean - 0.25) < 5 * 0.25 / std::sqrt(n));
    CHECK(std::abs(variance - 1.0 / 16) < 0.003);
  }
  SECTION("normal(3, 2): mean 3, variance 4") {
    auto [mean, variance] = moments(n, [&] { return stream.normal(3, 2); });
    CHECK(std::abs(mean - 3) < 5 * 2 / std::sqrt(n));
    CHECK(std::abs(variance - 4) < 0.06);
  }
  SECTION("poisson: mean = variance = lambda, for small and large lambda") {
    for (double lambda : {0.7, 12.0, 45.0, 900.0}) {
      auto [mean, variance] = moments(n, [&] { return static_cast<double>(stream.poisson(lambda)); });
      INFO("lambda " << lambda);
      CHECK(std::abs(mean - lambda) < 5 * std::sqrt(lambda / n));
      CHECK(std::abs(variance / lambda - 1) < 0.02);
    }
  }
  SECTION("below(6) is uniform over 0..5") {
    std::vector<int> counts(6);
    for (int i = 0; i < n; ++i) ++counts[stream.below(6)];
    for (int count : counts) CHECK(std::abs(count - n / 6.0) < 5 * std::sqrt(n * (1.0 / 6) * (5.0 / 6)));
  }
}
