#include "tools/bench/fp32_peak.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#if defined(__AVX__) || defined(__SSE2__)
#include <immintrin.h>
#endif

namespace fleetcast::bench {

namespace {

// The widest float vector the build targets, and a multiply-add on it: one FMA instruction where
// the build has FMA (every AVX-512 machine does), a multiply and an add otherwise.
#if defined(__AVX512F__)
using Vector = __m512;
constexpr int kVectorFloats = 16;
Vector broadcast(float x) { return _mm512_set1_ps(x); }
Vector multiply_add(Vector a, Vector b, Vector c) { return _mm512_fmadd_ps(a, b, c); }
void store(float* out, Vector v) { _mm512_storeu_ps(out, v); }
#elif defined(__AVX__)
using Vector = __m256;
constexpr int kVectorFloats = 8;
Vector broadcast(float x) { return _mm256_set1_ps(x); }
#if defined(__FMA__)
Vector multiply_add(Vector a, Vector b, Vector c) { return _mm256_fmadd_ps(a, b, c); }
#else
Vector multiply_add(Vector a, Vector b, Vector c) { return _mm256_add_ps(_mm256_mul_ps(a, b), c); }
#endif
void store(float* out, Vector v) { _mm256_storeu_ps(out, v); }
#elif defined(__SSE2__)
using Vector = __m128;
constexpr int kVectorFloats = 4;
Vector broadcast(float x) { return _mm_set1_ps(x); }
Vector multiply_add(Vector a, Vector b, Vector c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
void store(float* out, Vector v) { _mm_storeu_ps(out, v); }
#else
using Vector = float;
constexpr int kVectorFloats = 1;
Vector broadcast(float x) { return x; }
Vector multiply_add(Vector a, Vector b, Vector c) { return a * b + c; }
void store(float* out, Vector v) { *out = v; }
#endif

#if defined(__FMA__)
constexpr bool kFused = true;
#else
constexpr bool kFused = false;
#endif

// Independent accumulation chains: enough to cover the FMA latency times the FMA pipes (2 x 4 on
// current x86 cores; measured here, 12 chains reach about 60% of what 16 do with AVX-512), few
// enough to stay in the vector registers with the two constants (32 with AVX-512, 16 before).
#if defined(__AVX512F__)
constexpr int kChains = 16;
#else
constexpr int kChains = 12;
#endif
constexpr std::int64_t kCalibrationIterations = 1'000'000;

// acc = acc * a + b on every chain; a < 1 keeps the values bounded and normal. Returns the sum of
// all lanes so that the compiler cannot drop the loop.
float run_chains(std::int64_t iterations) {
  const Vector a = broadcast(0.999999f);
  const Vector b = broadcast(1e-6f);
  Vector acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = broadcast(static_cast<float>(c));
  for (std::int64_t i = 0; i < iterations; ++i) {
    for (Vector& chain : acc) chain = multiply_add(chain, a, b);
  }
  float sum = 0;
  float lanes[kVectorFloats];
  for (const Vector& chain : acc) {
    store(lanes, chain);
    for (const float lane : lanes) sum += lane;
  }
  return sum;
}

struct Sample {
  double gflops;
  double seconds;
};

Sample time_chains(std::int64_t iterations) {
  const auto start = std::chrono::steady_clock::now();
  const volatile float sink = run_chains(iterations);
  (void)sink;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {2.0 * kChains * kVectorFloats * static_cast<double>(iterations) / seconds / 1e9, seconds};
}

}  // namespace

// The best run, not the median: on a shared machine other work only ever slows a run down.
Fp32Peak measure_fp32_peak(int runs, double seconds) {
  const Sample calibration = time_chains(kCalibrationIterations);
  const auto iterations = std::max<std::int64_t>(
      kCalibrationIterations, static_cast<std::int64_t>(kCalibrationIterations * seconds / calibration.seconds));
  double best = 0;
  for (int run = 0; run < std::max(1, runs); ++run) best = std::max(best, time_chains(iterations).gflops);
  return {best, kVectorFloats, kFused};
}

}  // namespace fleetcast::bench
