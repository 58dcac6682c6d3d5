#!/usr/bin/env bash
# Configures and builds maskprior in ./build (Release); binaries land in build/bin.
# LibTorch, pybind11 and the Python interpreter come from the environment scripts/setup.sh makes
# ($MASKPRIOR_VENV, default /opt/maskprior/venv): LibTorch through torch.utils.cmake_prefix_path.
# ccache, when installed, caches compilations across clones (CCACHE_BASEDIR makes paths relative).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
venv=${MASKPRIOR_VENV:-/opt/maskprior/venv}
python=$venv/bin/python
if [[ ! -x "$python" ]]; then
  echo "build: no Python environment at $venv; run scripts/setup.sh first" >&2
  exit 1
fi
torch_prefix=$("$python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
pybind11_dir=$("$python" -m pybind11 --cmakedir)
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
  # LibTorch's files compile through a precompiled <torch/torch.h>: ccache caches those only
  # with these sloppinesses (its manual, "Precompiled headers").
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMASKPRIOR_WERROR=ON \
  -DCMAKE_PREFIX_PATH="$torch_prefix" -DPython3_EXECUTABLE="$python" \
  -Dpybind11_DIR="$pybind11_dir" "${launcher[@]}" >/dev/null
cmake --build build -j "$jobs"
# An editable install of the Python module into the environment: a .pth file in its site
# directory that points at build/python, as `pip install -e` would.
if [[ -f build/python/maskprior/__init__.py ]]; then
  site=$("$python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
  echo "$PWD/build/python" >"$site/maskprior.pth"
  echo "build: $python imports maskprior from $PWD/build/python"
fi
