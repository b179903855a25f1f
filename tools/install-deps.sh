#!/usr/bin/env bash
# Installs the Debian packages fleetcast builds and tests with, skipping those already present,
# and the npm packages of the Kubernetes export's schema check (tests/export/k8s-schemas, pinned by
# its package-lock.json), reinstalled only when the lockfile changed.
# Usage: tools/install-deps.sh   (as root, or with sudo available)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libboost-graph-dev libeigen3-dev libsqlite3-dev nlohmann-json3-dev libcli11-dev catch2
  coinor-libcbc-dev coinor-libclp-dev
  sqlite3 python3 python3-jsonschema
  libopenmpi-dev openmpi-bin
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

# The schema packages: `npm ci` from the lockfile, skipped while node_modules was installed from
# the same lockfile (a copy of it kept in node_modules).
schemas="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/export/k8s-schemas"
if cmp -s "$schemas/package-lock.json" "$schemas/node_modules/.fleetcast-lock.json"; then
  echo "install-deps: k8s-schemas node_modules up to date"
else
  echo "install-deps: npm ci in $schemas"
  npm ci --prefix "$schemas" --no-audit --no-fund --loglevel=error >/dev/null
  cp "$schemas/package-lock.json" "$schemas/node_modules/.fleetcast-lock.json"
fi
