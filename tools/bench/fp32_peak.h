// One core's FP32 peak as this build can reach it: a tight loop of independent fused multiply-adds
// on the widest float vectors the build targets (16 floats with AVX-512, 8 with AVX, 4 with SSE),
// with intrinsics. Compiled with the fast inference path's flags (FLEETCAST_NATIVE), so the share
// of the peak that bench_forecast reports compares like with like.
//
// Thread-safety: reentrant; measure on an otherwise idle core.
#pragma once

namespace fleetcast::bench {

struct Fp32Peak {
  double gflops = 0;        // the best of the runs
  int vector_floats = 0;    // floats per vector register
  bool fused = false;       // hardware FMA (one instruction) rather than a multiply and an add
};

/// The best of `runs` (at least one) timings of about `seconds` each (at least a few milliseconds),
/// after a short calibration run that is not counted.
Fp32Peak measure_fp32_peak(int runs, double seconds = 0.02);

}  // namespace fleetcast::bench
