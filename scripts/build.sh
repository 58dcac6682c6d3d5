#!/usr/bin/env bash
# Configures and builds maskprior in ./build (Release); binaries land in build/bin.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMASKPRIOR_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
