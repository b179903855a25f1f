// The fast CPU inference path: the LSTM of models/lstm_layout.h in single precision, the "cpu"
// backend of the registry. The double-precision forward pass of models/lstm_network.h stays the
// numerical oracle (of this path, of the CUDA kernel and of its emulator); this one is tested
// against it within 1e-4 relative (tests/models/lstm_inference_test.cpp).
//
// How it reaches the machine's limit: series run in tiles of 128; for each step and
// layer a tile's four gates are one float matrix-matrix product (W_l with its bias as one more
// column, times the stacked layer input, previous hidden state and a row of ones), followed by
// one vectorised pass of the activations and the cell update. Built with FLEETCAST_NATIVE (the
// release preset), Eigen's kernels use the build machine's widest vectors and FMA.
//
// Thread-safety: a free function over caller-owned data; reentrant.
#pragma once

#include "fleetcast/status.h"
#include "models/lstm_layout.h"

namespace fleetcast::models {

/// Runs `params` in float32 (the same contract and checks as lstm_forward_cpu).
Status lstm_forward_cpu_fp32(const LstmForwardParams& params);

/// The vector instruction sets this path was compiled for, as Eigen names them (e.g. "SSE, SSE2"
/// without FLEETCAST_NATIVE; "AVX512, FMA, AVX2, ..." with it on such a machine).
const char* lstm_fp32_instruction_sets();

}  // namespace fleetcast::models
