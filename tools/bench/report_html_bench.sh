#!/usr/bin/env bash
# HTML size and time to render of a one-year, 5-minute run's report: bench_report_html writes it,
# then headless Chromium (tests/report/check_reports.mjs) opens it, checks it and times it from
# navigation to every chart drawn; a screenshot lands beside the file.
# Usage: tools/bench/report_html_bench.sh [BUILD_DIR]   (default build/release)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build=${1:-$root/build/release}
out="$build/tools/bench/report_html"
mkdir -p "$out"
"$build/tools/bench/bench_report_html" "$root" "$out/year_5m.html"
node "$root/tests/report/check_reports.mjs" "$root/report/assets" "${FLEETCAST_CHROMIUM:-/usr/bin/chromium}" "$out" "$out/year_5m.html"
