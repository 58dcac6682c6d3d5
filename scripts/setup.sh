#!/usr/bin/env bash
# Installs the Debian packages maskprior needs, only those that are missing (idempotent).
# With arguments, installs those packages instead (e.g. scripts/fuzz.sh's optional clang).
set -euo pipefail
packages=(
  build-essential cmake git pkg-config
  libtorch-dev libopenblas0-pthread libgloo-dev
  tao-pegtl-dev libeigen3-dev libtbb-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev libpng-dev libssl-dev
  pybind11-dev python3-dev python3-numpy python3-torch
  python3-venv python3-pip python3-setuptools python3-wheel
  libplplot-dev plplot-driver-cairo fonts-dejavu-core
  zlib1g-dev dataset-fashion-mnist fortunes
  libcpp-httplib-dev chromium python3-websocket
)
if (($#)); then packages=("$@"); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi
