#!/usr/bin/env bash
# The checks to run when a GPU is lent, in one call, from a folder of binaries built elsewhere with
# the `cuda` layout (tests_gpu, bench_forecast_cudnn, bench_forecast; -march no newer than the GPU
# machine's processor): the device and toolkit, the parity test (every shape, 1/17/1037 series),
# the cuDNN comparison, the CPU path at 64k series (the ">= 50x" reference), then compute-sanitizer
# memcheck, synccheck, initcheck and racecheck on the parity test's quick size. Each step has its
# own time limit so that one slow step still leaves the others' figures; the logs go to OUTPUT, one
# per step, and a short summary ends stdout. About 6 minutes on an H200.
#
# Usage: gpu_device_checks.sh BIN_DIR OUTPUT_DIR
#   The binaries come from (README, Load forecasting, *On a GPU*):
#     cmake -S . -B build/device -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLEETCAST_CUDA=ON \
#       -DFLEETCAST_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3 -DFLEETCAST_MPI=OFF
#     ninja -C build/device tests_gpu bench_forecast_cudnn bench_forecast
#   BIN_DIR may also hold shared libraries they need that the GPU machine lacks (libsqlite3.so.0);
#   libcudnn.so.9 is looked for in the machine's CUDA toolkit, /usr/lib, /usr/local/lib and /opt.
set -uo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 BIN_DIR OUTPUT_DIR" >&2; exit 2; }
bin=$(cd "$1" && pwd) out=$2
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
} > "$out/machine.txt" 2>&1

step parity 180 "$bin/tests_gpu"
step cudnn 90 "$bin/bench_forecast_cudnn" 48 48 7
step cpu64k 45 "$bin/bench_forecast" 65536 48 48 1 fp32
step memcheck 90 "$sanitizer" --tool memcheck --leak-check full --error-exitcode 9 "$bin/tests_gpu" --quick
step synccheck 60 "$sanitizer" --tool synccheck --error-exitcode 9 "$bin/tests_gpu" --quick
step initcheck 60 "$sanitizer" --tool initcheck --error-exitcode 9 "$bin/tests_gpu" --quick
# racecheck is the slow one (on an H200, 172 s for the quick size with one tile per block; with
# the two-tile cases 26 of 28 took 210 s); line-buffered so that a run cut off by its limit still
# shows which shapes it checked.
step racecheck 360 stdbuf -oL "$sanitizer" --tool racecheck --racecheck-report all --error-exitcode 9 "$bin/tests_gpu" --quick

cat "$out/machine.txt"
grep -E '^(ok|FAIL)|passed|FAILED|registry' "$out/parity.log" | tail -30
cat "$out/cudnn.log"
tail -8 "$out/cpu64k.log"
for check in memcheck synccheck initcheck racecheck; do echo "$check: $(tail -n 1 "$out/$check.log")"; done
cat "$out/summary.txt"
