#!/usr/bin/env bash
# Installs the Debian packages fleetcast builds and tests with, skipping those already present,
# and two npm folders, each pinned by its package-lock.json and reinstalled only when the lockfile
# changed: the HTML report's chart library (report/assets, inlined into libfleetcast at build time;
# also puppeteer-core for the report's browser test) and the Kubernetes export's schema check
# (tests/export/k8s-schemas).
# Usage: tools/install-deps.sh   (as root, or with sudo available)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libboost-graph-dev libeigen3-dev libsqlite3-dev nlohmann-json3-dev libcli11-dev catch2
  coinor-libcbc-dev coinor-libclp-dev
  libcpp-httplib-dev  # `fleetcast serve` (its HTTP server; Debian ships it compiled, with a header)
  sqlite3 python3 python3-jsonschema
  iproute2  # ss: the serve test reads the server's listen backlog
  libopenmpi-dev openmpi-bin
  chromium
  clang-14 libfuzzer-14-dev  # the `fuzz` preset and tools/fuzz.sh
)
# node and npm: the apt packages, unless a node is already installed (e.g. from NodeSource).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then packages+=(nodejs npm); fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

run_as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  run_as_root apt-get update -qq
  run_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# `npm ci` from a folder's lockfile, skipped while its node_modules was installed from the same
# lockfile (a copy of it kept in node_modules).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
npm_ci() {
  local folder="$root/$1"
  if cmp -s "$folder/package-lock.json" "$folder/node_modules/.fleetcast-lock.json"; then
    echo "install-deps: $1 node_modules up to date"
  else
    echo "install-deps: npm ci in $folder"
    npm ci --prefix "$folder" --no-audit --no-fund --loglevel=error >/dev/null
    cp "$folder/package-lock.json" "$folder/node_modules/.fleetcast-lock.json"
  fi
}
npm_ci report/assets
npm_ci tests/export/k8s-schemas
