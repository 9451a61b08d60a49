#!/usr/bin/env bash
# Installs the Debian 12 packages Astraeus needs to build and test. Run as root (or with sudo).
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config zlib1g-dev
      libfmt-dev libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
      libcpp-httplib-dev libsqlitecpp-dev libsqlite3-dev libssl-dev libspdlog-dev  # astraeus serve
      curl jq prometheus wrk  # the service's integration tests, Prometheus scrape test, load benchmark
      chromium  # chromium: the headless render test of the HTML report (tests/report/)
      clang-19 libclang-rt-19-dev libfuzzer-19-dev)  # the libFuzzer targets (fuzz/, scripts/fuzz.sh)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -eq 0 ]; then echo "bootstrap: all packages present"; exit 0; fi
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
