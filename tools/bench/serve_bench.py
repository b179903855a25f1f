#!/usr/bin/env python3
"""Requests per second and p50/p99 latency of `POST /v1/plan` for the quickstart scenario, at 1, 4
and 16 concurrent clients (each on its own keep-alive connection), against `fleetcast serve` on a
free port of 127.0.0.1. Every reply is checked to be 200 and the same bytes as the first one.

Usage: tools/bench/serve_bench.py FLEETCAST [--requests N] [--threads T] [--concurrency 1,4,16]
Not a test: it measures. Run it with `nice` on a shared machine and say how loaded it was."""
import argparse
import http.client
import json
import os
import signal
import statistics
import subprocess
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUICKSTART = os.path.join(ROOT, "scenarios", "examples", "quickstart.json")


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def measure(port, body, clients, total):
    latencies, replies = [], set()
    lock = threading.Lock()

    def client(count):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        for _ in range(count):
            start = time.perf_counter()
            connection.request("POST", "/v1/plan", body=body)
            response = connection.getresponse()
            data = response.read()
            elapsed = time.perf_counter() - start
            with lock:
                latencies.append(elapsed)
                replies.add((response.status, data))
        connection.close()

    threads = [threading.Thread(target=client, args=(total // clients,)) for _ in range(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - start
    assert len(replies) == 1 and next(iter(replies))[0] == 200, "replies differ or failed"
    return len(latencies) / wall, percentile(latencies, 0.5), percentile(latencies, 0.99)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("fleetcast")
    parser.add_argument("--requests", type=int, default=64, help="requests per concurrency level")
    parser.add_argument("--threads", type=int, default=0, help="the server's --threads")
    parser.add_argument("--concurrency", default="1,4,16")
    args = parser.parse_args()
    server = subprocess.Popen([args.fleetcast, "serve", "--port", "0", "--threads", str(args.threads), "--queue", "64"],
                              stderr=subprocess.PIPE)
    port = json.loads(server.stderr.readline())["port"]
    threading.Thread(target=lambda: server.stderr.read(), daemon=True).start()
    with open(QUICKSTART, "rb") as f:
        body = f.read()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    measure(port, body, 1, 4)  # warm-up
    print(f"{'clients':>7} {'requests':>8} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
    for clients in (int(c) for c in args.concurrency.split(",")):
        total = max(clients, args.requests // clients * clients)
        rate, p50, p99 = measure(port, body, clients, total)
        print(f"{clients:>7} {total:>8} {rate:>8.2f} {p50 * 1000:>8.1f} {p99 * 1000:>8.1f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)


if __name__ == "__main__":
    main()
