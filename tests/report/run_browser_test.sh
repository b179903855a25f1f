#!/usr/bin/env bash
# The report browser test: makes one report of each kind, then checks them in headless Chromium.
# Exit 77 (ctest: skipped) when node, Chromium or puppeteer-core is missing, saying what to install.
# Usage: run_browser_test.sh MAKE_REPORTS SOURCE_DIR OUT_DIR
set -euo pipefail
make_reports=$1 source_dir=$2 out_dir=$3
assets="$source_dir/report/assets"
chromium=${FLEETCAST_CHROMIUM:-/usr/bin/chromium}
missing=()
command -v node >/dev/null || missing+=("node (Debian nodejs)")
[[ -x $chromium ]] || missing+=("Chromium at $chromium (Debian chromium)")
[[ -d $assets/node_modules/puppeteer-core ]] || missing+=("puppeteer-core (npm ci in report/assets)")
if ((${#missing[@]})); then
  echo "SKIPPED: install ${missing[*]}: tools/install-deps.sh installs them"
  exit 77
fi
rm -rf "$out_dir" && mkdir -p "$out_dir"
"$make_reports" "$source_dir" "$out_dir"
node "$source_dir/tests/report/check_reports.mjs" "$assets" "$chromium" "$out_dir" \
  "$out_dir/plan.html" "$out_dir/run.html" "$out_dir/backtest.html" "$out_dir/batch.html"
