#!/usr/bin/env bash
# Builds maskprior on a GPU machine against that machine's own PyTorch (the wheel's LibTorch, 2.x
# with CUDA: 2.11.0+cu130 and Python 3.12 on the H200 machine this project is lent), runs the
# LibTorch tests, the step benchmark and a short `maskc reproduce gotu --preset paper` slice on
# the GPU, and prints steps/s. Two stages, because that machine cannot fetch packages:
#
#   scripts/gpu_check.sh fetch   # on a Debian 12 machine with network: apt-get download the -dev
#                                # .debs (and the runtime libraries they link) into gpu/debs/
#                                # (git-ignored)
#   scripts/gpu_check.sh         # on the GPU machine, with gpu/debs/ copied beside the checkout:
#                                # unpack into gpu/prefix/, configure with that prefix in
#                                # CMAKE_PREFIX_PATH, build, test, run
#
# The build there uses the machine's cmake, g++ and python3 (whose torch gives LibTorch through
# torch.utils.cmake_prefix_path; PYTHON=... chooses another). Outputs go to build-gpu/ and the log
# to $OUT when that is set, else build-gpu/. GPU_CHECK_CONFIGURE_ONLY=1 stops after configuring
# (a check of the prefix that runs anywhere).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
debs=$root/gpu/debs
prefix=$root/gpu/prefix
packages=(
  tao-pegtl-dev libeigen3-dev libtbb-dev libtbb12 libtbbmalloc2 libtbbbind-2-5 libfmt-dev libfmt9 libcli11-dev
  nlohmann-json3-dev libgtest-dev libgmock-dev libssl-dev libssl3 libpng-dev libpng16-16
  zlib1g-dev libbenchmark-dev libbenchmark1debian libgloo-dev libcpp-httplib-dev
  libplplot-dev libplplotcxx15 libplplot17 libqsastime0 libcsirocsa0 libcsironn0 libqhull-r8.0
  libshp2 libltdl7 plplot-driver-cairo fonts-dejavu-core libbrotli-dev libbrotli1
)

if [[ "${1:-}" == "fetch" ]]; then
  mkdir -p "$debs"
  (cd "$debs" && apt-get download "${packages[@]}")
  ls -l "$debs"
  echo "gpu_check: $(ls "$debs" | wc -l) .debs in gpu/debs; copy gpu/debs to the GPU machine"
  exit 0
fi

log=${OUT:-$root/build-gpu}/gpu_check.log
mkdir -p "$(dirname "$log")"
exec > >(tee "$log") 2>&1

shopt -s nullglob
files=("$debs"/*.deb)
if ((${#files[@]} == 0)); then
  echo "gpu_check: no .debs in gpu/debs; run 'scripts/gpu_check.sh fetch' first and copy gpu/debs" >&2
  exit 1
fi
rm -rf "$prefix" && mkdir -p "$prefix"
for f in "${files[@]}"; do dpkg-deb -x "$f" "$prefix"; done  # never into /: that can break it
lib=$prefix/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PKG_CONFIG_LIBDIR=$lib/pkgconfig:$prefix/usr/share/pkgconfig
# pkg-config files name /usr; point them at the prefix.
export PKG_CONFIG_SYSROOT_DIR=$prefix

python=${PYTHON:-$(command -v python3)}  # the one whose torch to build against
torch_prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
"$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
  "gpu", torch.cuda.is_available() and torch.cuda.get_device_name(0))'
nvcc=$(command -v nvcc || true)

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B build-gpu "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$torch_prefix;$prefix/usr;$lib/cmake" \
  -DCMAKE_INCLUDE_PATH="$prefix/usr/include" -DCMAKE_LIBRARY_PATH="$lib" \
  -DOPENSSL_ROOT_DIR="$prefix/usr" -DPNG_PNG_INCLUDE_DIR="$prefix/usr/include" \
  -DZLIB_ROOT="$prefix/usr" -DPython3_EXECUTABLE="$python" \
  ${nvcc:+-DCMAKE_CUDA_COMPILER="$nvcc"} \
  -DMASKPRIOR_WITH_PYTHON=OFF -DMASKPRIOR_BUILD_BENCH=ON -DMASKPRIOR_WERROR=OFF
if [[ -n "${GPU_CHECK_CONFIGURE_ONLY:-}" ]]; then echo "gpu_check: configured"; exit 0; fi
cmake --build build-gpu -j "$(nproc)"

echo "== tests (LibTorch: runtime, training, decoding, data parallelism)"
ctest --test-dir build-gpu -j "$(nproc)" --output-on-failure \
  -R "runtime|train|arith|decoder|distributed|family|sweep" -E "python" || tests_failed=1

echo "== step benchmark (cuda; float32, then bfloat16 autocast)"
for precision in fp32 bf16; do
  for size in gotu-quick gotu-paper arith-paper; do
    build-gpu/bin/step_bench --size "$size" --device cuda --precision "$precision" --steps 20 \
      --warmup 5 --eval
  done
done

echo "== maskc reproduce gotu --preset paper (one row, one seed, one epoch) on the GPU"
runs=$(mktemp -d)
build-gpu/bin/maskc reproduce gotu --preset paper --device cuda --seeds 1 --epochs 1 \
  --only parity2-mask --out "$runs/gotu"
"$python" - "$runs/gotu" <<'PY'
import json, pathlib, sys
for summary in sorted(pathlib.Path(sys.argv[1]).rglob("summary.json")):
    s = json.loads(summary.read_text())
    print(f"{summary.parent}: {s['steps']} steps in {s['wall_seconds']:.1f} s = "
          f"{s['steps'] / s['wall_seconds']:.2f} steps/s (start-up and evaluations included)")
PY
rm -rf "$runs"
if [[ -n "${tests_failed:-}" ]]; then echo "gpu_check: some tests FAILED (see above)"; exit 1; fi
echo "gpu_check: done"
