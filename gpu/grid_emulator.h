// A host grid emulator for CUDA block bodies written against a Block (see gpu/lstm_block.h): each
// block runs with one std::thread per CUDA thread, a std::barrier for __syncthreads() and a buffer
// for its dynamic shared memory, followed by guard floats that must be left untouched. Blocks run
// one after another; the threads of a block run truly concurrently, so a missing or misplaced
// barrier shows up as a wrong result or, under ThreadSanitizer, as a reported data race.
//
// Header-only host C++20 (no CUDA): the tests use it on machines without a GPU.
//
// Thread-safety: run_grid may be called from several threads at once; the body must only share
// what a CUDA kernel may share between blocks.
#pragma once

#include <barrier>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

namespace fleetcast::gpu {

/// The grid and block shape of an emulated launch.
struct EmulatedLaunch {
  int blocks = 1;
  int threads = 32;                // per block
  std::size_t shared_bytes = 0;    // dynamic shared memory per block
};

/// The execution context of one emulated CUDA thread.
class EmulatedBlock {
 public:
  EmulatedBlock(int thread, int index, const EmulatedLaunch& launch, std::barrier<>& barrier, float* shared)
      : thread_(thread), index_(index), threads_(launch.threads), blocks_(launch.blocks), barrier_(&barrier),
        shared_(shared) {}
  [[nodiscard]] int thread() const { return thread_; }
  [[nodiscard]] int index() const { return index_; }
  [[nodiscard]] int threads() const { return threads_; }
  [[nodiscard]] int blocks() const { return blocks_; }
  void sync() const { barrier_->arrive_and_wait(); }
  [[nodiscard]] float* shared() const { return shared_; }

 private:
  int thread_, index_, threads_, blocks_;
  std::barrier<>* barrier_;
  float* shared_;
};

/// Floats after each block's shared memory that the body must not write.
inline constexpr std::size_t kSharedGuardFloats = 64;

/// Runs body(EmulatedBlock&) for every thread of every block. Returns "" or, when a block wrote
/// past its shared memory, which block did.
template <typename Body>
std::string run_grid(const EmulatedLaunch& launch, Body body) {
  struct alignas(16) Quad {
    float values[4];
  };
  constexpr float kSentinel = -98765.4321f;
  const std::size_t shared_quads = (launch.shared_bytes + sizeof(Quad) - 1) / sizeof(Quad);
  for (int index = 0; index < launch.blocks; ++index) {
    std::vector<Quad> memory(shared_quads + kSharedGuardFloats / 4);
    float* shared = memory.front().values;
    for (std::size_t i = 0; i < kSharedGuardFloats; ++i) shared[shared_quads * 4 + i] = kSentinel;
    std::barrier<> barrier(launch.threads);
    {
      std::vector<std::jthread> threads;
      threads.reserve(static_cast<std::size_t>(launch.threads));
      for (int thread = 0; thread < launch.threads; ++thread) {
        threads.emplace_back([&, thread] {
          EmulatedBlock block(thread, index, launch, barrier, shared);
          body(block);
        });
      }
    }  // joined
    for (std::size_t i = 0; i < kSharedGuardFloats; ++i) {
      if (shared[shared_quads * 4 + i] != kSentinel) {
        return "block " + std::to_string(index) + " wrote past its " + std::to_string(launch.shared_bytes) +
               " bytes of shared memory";
      }
    }
  }
  return "";
}

}  // namespace fleetcast::gpu
