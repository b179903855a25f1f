#!/usr/bin/env bash
# The checks to run when a GPU is lent, in one call, from a folder of binaries built elsewhere with
# the `cuda` layout (tests_gpu, bench_forecast_cudnn, bench_forecast; -march no newer than the GPU
# machine's processor): the device and toolkit, the parity test (every shape, 1/17/1037 series, both
# rollout kernels), the cuDNN comparison (and a baseline build's, for an A/B), a profile of one
# rollout of each kernel (Nsight Compute, where the machine has it), compute-sanitizer memcheck, racecheck,
# synccheck and initcheck on the parity test's quick size, then the CPU path at 64k series (the
# ">= 50x" reference). Each step has its own time limit so that one slow step still leaves the
# others' figures; the logs go to OUTPUT, one per step, and a short summary ends stdout. At most
# about 9 minutes.
#
# Usage: gpu_device_checks.sh BIN_DIR OUTPUT_DIR [BASELINE_BIN_DIR]
#   BASELINE_BIN_DIR: bench_forecast_cudnn built from another commit, timed in the same call for
#   an A/B of two kernel versions on one card.
#   The binaries come from (README, Load forecasting, *On a GPU*):
#     cmake -S . -B build/device -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLEETCAST_CUDA=ON \
#       -DFLEETCAST_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3 -DFLEETCAST_MPI=OFF
#     ninja -C build/device tests_gpu bench_forecast_cudnn bench_forecast
#   BIN_DIR may also hold shared libraries they need that the GPU machine lacks (libsqlite3.so.0);
#   libcudnn.so.9 is looked for in the machine's CUDA toolkit, /usr/lib, /usr/local/lib and /opt.
set -uo pipefail
[[ $# -eq 2 || $# -eq 3 ]] || { echo "usage: $0 BIN_DIR OUTPUT_DIR [BASELINE_BIN_DIR]" >&2; exit 2; }
bin=$(cd "$1" && pwd) out=$2 baseline=${3:+$(cd "$3" && pwd)}
mkdir -p "$out"

cudnn_dir=$(dirname "$(find /usr/local/cuda*/lib64 /usr/lib /opt /usr/local/lib -name 'libcudnn.so.9' 2>/dev/null | head -1)" 2>/dev/null)
export LD_LIBRARY_PATH="$bin:${cudnn_dir:-}:${LD_LIBRARY_PATH:-}"
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)

step() {  # step NAME LIMIT_SECONDS COMMAND...: runs it, logs to OUTPUT/NAME.log, records its status
  local name=$1 limit=$2
  shift 2
  local started=$SECONDS
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  local status=$?
  printf '%-10s exit %3d  %4d s\n' "$name" "$status" $((SECONDS - started)) >> "$out/summary.txt"
}

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
  nvcc --version 2>/dev/null | tail -1
  echo "cuDNN from: ${cudnn_dir:-not found}; compute-sanitizer: ${sanitizer:-not found}"
  lscpu | grep -E 'Model name|^CPU\(s\)|Flags' | cut -c1-200
  # The rollout kernel's instruction mix: 16-byte shared loads for the inputs, FFMA for the gates.
  echo "rollout kernel SASS (sm_90): $(cuobjdump --dump-sass "$bin/tests_gpu" 2>/dev/null |
    awk '/Function : .*lstm_rollout_kernel/ { on = 1; next } /Function :/ { on = 0 } on' |
    grep -oE '\b(FFMA|LDS\.128|LDS|LDG\.E[.A-Z0-9]*|BAR\.SYNC[.A-Z]*|MUFU\.[A-Z0-9]+)\b' | sort | uniq -c | tr -s ' \n' ' ')"
  # The tensor-core rollout's: HMMA (three per product), its fragment loads and the TF32 roundings.
  echo "tensor rollout kernel SASS (sm_90): $(cuobjdump --dump-sass "$bin/tests_gpu" 2>/dev/null |
    awk '/Function : .*lstm_tensor_rollout_kernel/ { on = 1; next } /Function :/ { on = 0 } on' |
    grep -oE '\b(HMMA[.A-Z0-9]*|FFMA|LDS\.128|LDS|LDG\.E[.A-Z0-9]*|BAR\.SYNC[.A-Z]*|MUFU\.[A-Z0-9]+|F2F[.A-Z0-9]*)\b' |
    sort | uniq -c | tr -s ' \n' ' ')"
} > "$out/machine.txt" 2>&1

step parity 180 "$bin/tests_gpu"
step cudnn 120 "$bin/bench_forecast_cudnn" 48 48 7
[[ -n "$baseline" ]] && step baseline 75 "$baseline/bench_forecast_cudnn" 48 48 7
# Where the rollout's time goes at hidden 64, 65,536 series (the bench's fourth shape: 3 x 16 launches
# of the rollout before it): Nsight Compute's throughput, occupancy and warp stall sections, with
# the clocks left as they are.
profiler=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[[ -n "$profiler" ]] && step profile 90 "$profiler" --clock-control none -k regex:lstm_rollout --launch-skip 48 --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis \
  "$bin/bench_forecast_cudnn" 48 48 7
# The tensor-core rollout at hidden 128, 65,536 series (the bench's eighth shape: 7 x 8 launches of
# it before).
[[ -n "$profiler" ]] && step profile_tensor 60 "$profiler" --clock-control none -k regex:lstm_tensor_rollout \
  --launch-skip 56 --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats \
  --section ComputeWorkloadAnalysis "$bin/bench_forecast_cudnn" 48 48 7
step memcheck 75 "$sanitizer" --tool memcheck --leak-check full --error-exitcode 9 "$bin/tests_gpu" --quick
# racecheck is the slow one (on an H200, 172-210 s for the quick size with the kernel of
# 2026-11-26); line-buffered so that a run cut off by its limit still shows which shapes it checked.
step racecheck 180 stdbuf -oL "$sanitizer" --tool racecheck --racecheck-report all --error-exitcode 9 "$bin/tests_gpu" --quick
step synccheck 45 "$sanitizer" --tool synccheck --error-exitcode 9 "$bin/tests_gpu" --quick
step initcheck 45 "$sanitizer" --tool initcheck --error-exitcode 9 "$bin/tests_gpu" --quick
step cpu64k 45 "$bin/bench_forecast" 65536 48 48 1 fp32

cat "$out/machine.txt"
grep -E '^(ok|FAIL)|passed|FAILED|registry' "$out/parity.log" | tail -30
cat "$out/cudnn.log"
[[ -n "$baseline" ]] && { echo "baseline:"; cat "$out/baseline.log"; }
for profile in profile profile_tensor; do
  [[ -f "$out/$profile.log" ]] && { echo "$profile:"; grep -E 'Duration|Throughput|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc A' "$out/$profile.log"; }
done
tail -8 "$out/cpu64k.log"
for check in memcheck synccheck initcheck racecheck; do echo "$check: $(tail -n 1 "$out/$check.log")"; done
cat "$out/summary.txt"
