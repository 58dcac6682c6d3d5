#!/usr/bin/env bash
# An installed maskc needs no checkout: `cmake --install` to a temporary prefix, then, from a
# folder outside the source tree, `maskc reproduce demo` (its parity2 rows, one epoch) and
# `maskc report` find the shipped specs under <prefix>/share/maskprior. Neither binary holds the
# source tree's path.
# Usage: installed_maskc.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source_dir=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cmake --install "$build" --prefix "$d/prefix" >/dev/null
bin=$d/prefix/bin
test -f "$d/prefix/share/maskprior/specs/gotu/parity2.mask"
for exe in maskc maskc-runtime; do
  if grep -qF "$source_dir" "$bin/$exe"; then
    echo "FAIL: $bin/$exe holds the source path $source_dir" >&2
    exit 1
  fi
done
cd "$d"
"$bin/maskc" reproduce demo --only parity2 --epochs 1 --jobs 1 --threads 1 --device cpu \
  --out "$d/demo" >"$d/reproduce.log" 2>&1 || { cat "$d/reproduce.log" >&2; exit 1; }
grep -q "parity2-mask" "$d/demo/results.md"
grep -qF "$d/prefix/share/maskprior/specs/gotu/parity2.mask" "$d/demo/parity2-mask/seed0/config.json"
"$bin/maskc" report "$d/demo" >"$d/report.log"
grep -q "^## parity2" "$d/demo/REPORT.md"
grep -q "min-degree interpolator" "$d/demo/REPORT.md"
# Without its share folder, maskc says where it looked instead of failing obscurely.
mv "$d/prefix/share" "$d/share-moved"
if "$bin/maskc" reproduce demo --only parity2 --out "$d/demo2" 2>"$d/err"; then
  echo "FAIL: reproduce ran without its specs" >&2
  exit 1
fi
grep -q "maskc's specs are not in" "$d/err"
MASKPRIOR_SHARE_DIR=$d/share-moved/maskprior "$bin/maskc" report "$d/demo" >/dev/null
echo "installed maskc: reproduce demo and report ran from $d"
