#!/usr/bin/env bash
# Configures and builds maskprior in ./build (Release); binaries land in build/bin.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMASKPRIOR_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
# An editable install of the Python module for Debian's python3 (the interpreter it was built
# for): a .pth file in its site directory that points at build/python, as `pip install -e` would.
if [[ -f build/python/maskprior/__init__.py ]]; then
  site=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
  if mkdir -p "$site" 2>/dev/null && echo "$PWD/build/python" >"$site/maskprior.pth" 2>/dev/null; then
    echo "build: /usr/bin/python3 imports maskprior from $PWD/build/python ($site/maskprior.pth)"
  else
    echo "build: cannot write $site; use PYTHONPATH=$PWD/build/python /usr/bin/python3"
  fi
fi
