#!/usr/bin/env python3
"""torch.nn.LSTM on the shapes of bench_forecast, for comparison (benchmarks only, not a dependency).

One layer of hidden 64 and 128 with 7 input features and a linear head of 3 quantiles on the
horizon steps, `series` sequences of `context` + `horizon` steps, one thread, inference under
torch.no_grad(). Prints the median over `runs` in bench_forecast's units: cell steps per second and
GFLOP/s counted the same way (2*4H*K per series and step for the gate product, K = 7 + H, plus 13H
for the bias, the five activations and the cell update, plus 2*Q*H + Q for the head per horizon
step). The step features are random here: bench_forecast computes them inside its timing, which
only favours PyTorch.

Usage (Debian's PyTorch: apt-get install python3-torch; /usr/bin/python3, not a virtualenv's):
    /usr/bin/python3 tools/bench/torch_lstm_bench.py [series=1000] [context=48] [horizon=48] [runs=5] [float32|float64]
"""
import statistics
import sys
import time

import torch

FEATURES = 7
QUANTILES = 3


def flops_per_series(hidden, steps, horizon):
    columns = FEATURES + hidden
    cell = 2 * 4 * hidden * columns + 13 * hidden
    head = 2 * QUANTILES * hidden + QUANTILES
    return steps * cell + horizon * head


def main(argv):
    series, context, horizon, runs = (int(a) for a in (argv[1:5] + ["1000", "48", "48", "5"][len(argv[1:5]):]))
    dtype = getattr(torch, argv[5]) if len(argv) > 5 else torch.float32
    torch.set_num_threads(1)
    torch.manual_seed(7)
    steps = context + horizon
    print(f"torch {torch.__version__}, {dtype}, threads {torch.get_num_threads()}, "
          f"oneDNN {torch.backends.mkldnn.is_available()}")
    print("backend      layers  hidden  series  context  horizon  median_s  cell_steps/s  GFLOP/s")
    for hidden in (64, 128):
        lstm = torch.nn.LSTM(FEATURES, hidden, num_layers=1).to(dtype).eval()
        head = torch.nn.Linear(hidden, QUANTILES).to(dtype).eval()
        inputs = torch.randn(steps, series, FEATURES, dtype=dtype)
        seconds = []
        with torch.no_grad():
            for _ in range(runs + 1):  # the first run warms up and is not counted
                start = time.perf_counter()
                hidden_states, _ = lstm(inputs)
                head(hidden_states[context:])
                seconds.append(time.perf_counter() - start)
        median = statistics.median(seconds[1:])
        gflops = series * flops_per_series(hidden, steps, horizon) / median / 1e9
        print(f"torch-{str(dtype).removeprefix('torch.'):7} {1:6d}  {hidden:6d}  {series:6d}  {context:7d}  "
              f"{horizon:7d}  {median:8.4f}  {series * steps / median:12.0f}  {gflops:7.2f}")


if __name__ == "__main__":
    main(sys.argv)
