#!/usr/bin/env bash
# Installs what maskprior needs, only what is missing (idempotent):
#   1. Debian 12 packages (compilers, libraries, chromium for the browser tests, data sets);
#   2. a Python virtual environment with the pinned PyTorch wheel (its LibTorch is the one maskc
#      builds against: headers and CMake config ship inside the wheel), NumPy, pybind11 (NumPy 2
#      needs pybind11 >= 2.12; Debian's is 2.10), transformers, websocket-client, and setuptools
#      and wheel for `pip install .` without network. It lives outside the clone, in
#      $MASKPRIOR_VENV (default /opt/maskprior/venv), so a fresh clone on the same machine reuses
#      it; pip's cache keeps a re-install fast. scripts/build.sh reads the same variable.
# With arguments, installs those Debian packages instead (e.g. scripts/fuzz.sh's optional clang).
set -euo pipefail
packages=(
  build-essential cmake git pkg-config ccache
  libopenblas0-pthread libgloo-dev
  tao-pegtl-dev libeigen3-dev libtbb-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev libpng-dev libssl-dev
  python3-dev python3-venv python3-pip
  libplplot-dev plplot-driver-cairo fonts-dejavu-core
  zlib1g-dev dataset-fashion-mnist fortunes
  libcpp-httplib-dev chromium
)
# The Python environment's pins. torch: the index's current release line (a CUDA 13 build; its
# LibTorch links the CUDA paths, which run only where a GPU is present).
python_pins=(torch==2.15.0 numpy==2.4.6 pybind11==3.1.0 transformers==5.25.0
  websocket-client==1.9.2 setuptools==84.2.1 wheel==0.48.0)
venv=${MASKPRIOR_VENV:-/opt/maskprior/venv}

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
if (($#)); then exit 0; fi

# The environment is made from Debian's python3 (whose headers python3-dev installs, for the
# pybind11 module), and is complete when every pin is installed at its version.
if [[ ! -x "$venv/bin/python" ]]; then
  echo "setup: creating the Python environment $venv"
  mkdir -p "$(dirname "$venv")"
  /usr/bin/python3 -m venv "$venv"
fi
have=$("$venv/bin/python" -m pip freeze --all --disable-pip-version-check 2>/dev/null || true)
need=()
for pin in "${python_pins[@]}"; do
  grep -qix "$pin" <<<"$have" || need+=("$pin")
done
if ((${#need[@]})); then
  echo "setup: installing ${need[*]} into $venv (PyTorch with CUDA: a few GB the first time)"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${need[@]}"
else
  echo "setup: Python environment $venv complete ($(IFS=' '; echo "${python_pins[*]}"))"
fi
