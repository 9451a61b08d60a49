#!/usr/bin/env bash
# Installs the Debian 12 packages Astraeus needs to build and test. Run as root (or with sudo).
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config zlib1g-dev
      ccache  # the compiler cache CMakeLists.txt uses when present (the five builds share it)
      libfmt-dev libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
      libcpp-httplib-dev libsqlitecpp-dev libsqlite3-dev libssl-dev libspdlog-dev  # astraeus serve
      libboost-dev  # Boost.Beast + Boost.Asio: the server of astraeus serve (api/http_server.cpp)
      curl jq prometheus wrk  # the service's integration tests, Prometheus scrape test, load benchmark
      openssl  # the TLS tests' CA and certificates (tests/service/tls_test.sh)
      chromium  # chromium: the headless render test of the HTML report (tests/report/)
      python3-torch  # examples/train_ddp.py: PyTorch DDP on CPU (tests/worker/)
      slurm-wlm slurmctld slurmd slurm-client munge libslurm-dev  # Slurm executor + its test cluster
      libpq-dev postgresql-15  # the PostgreSQL store (libpq) and its throw-away test server
      slurmdbd mariadb-server  # sacct on the test cluster (scripts/slurm-test-cluster.sh, docs/slurm.md)
      clang-19 libclang-rt-19-dev libfuzzer-19-dev)  # the libFuzzer targets (fuzz/, scripts/fuzz.sh)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
# The web pages' browser tests (tests/web/: npm's playwright-core drives chromium): nodejs, and
# Debian's npm package unless the nodejs installed (e.g. NodeSource's Node 20) brings its own.
dpkg -s nodejs >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || dpkg -s npm >/dev/null 2>&1 || missing+=(npm)
# The browser tests' one npm package, pinned by tests/web/package-lock.json.
web_deps() {
  local dir; dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/web"
  [ -d "$dir/node_modules/playwright-core" ] || npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
}
if [ ${#missing[@]} -eq 0 ]; then echo "bootstrap: all packages present"; web_deps; exit 0; fi
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# Package scripts must not start daemons (munge, slurmctld, slurmd, slurmdbd, mariadb, postgresql): the Slurm
# tests start their own under a temp folder and stop them by PID. policy-rc.d exit 101 = "denied".
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $SUDO chmod 755 /usr/sbin/policy-rc.d
  trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
web_deps
