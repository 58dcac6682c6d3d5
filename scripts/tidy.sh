#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy: bugprone, performance, naming, no function over 80 lines) over
# maskprior's own sources and fails if it reports anything. The LibTorch layers are included
# when MASKPRIOR_WITH_TORCH=ON (default OFF: each LibTorch file takes ~30 s to analyse).
#   bash scripts/tidy.sh            # everything but runtime/ and train/
#   MASKPRIOR_WITH_TORCH=ON bash scripts/tidy.sh
set -euo pipefail
cd "$(dirname "$0")/.."
with_torch=${MASKPRIOR_WITH_TORCH:-OFF}
build=build-tidy-${with_torch}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMASKPRIOR_WITH_TORCH="$with_torch" \
  -DMASKPRIOR_BUILD_TESTS=OFF -DMASKPRIOR_BUILD_BENCH=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
layers="core compiler io render tasks validate cli"
[[ $with_torch == ON ]] && layers="$layers runtime train"
files=()
for layer in $layers; do
  while IFS= read -r f; do files+=("$f"); done < <(ls "$layer"/*.cpp)
done
[[ $with_torch == ON ]] || files=($(printf '%s\n' "${files[@]}" | grep -v -e cmd_train -e cmd_reproduce -e runtime_))
log=$(mktemp)
run-clang-tidy -quiet -p "$build" -j "${JOBS:-$(nproc)}" "${files[@]}" >"$log" 2>&1 || true
if grep -E '(warning|error):' "$log"; then
  echo "tidy: clang-tidy reported the findings above" >&2
  rm -f "$log"
  exit 1
fi
rm -f "$log"
echo "tidy: clean (${#files[@]} files)"
