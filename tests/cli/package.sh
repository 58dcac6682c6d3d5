#!/usr/bin/env bash
# The installed package (tests/cmake/package.cmake).
# Usage: package.sh CMAKE BUILD_DIR SOURCE_DIR PYTHON CASE
set -eu
cmake=$1
build_dir=$2
source_dir=$3
python=$4
case_name=$5
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

# Install this build to a temporary prefix, build tests/consumer against it with
# find_package(maskprior), and check the consumer compiles parity2 as maskc does (N = 16 with the
# default n = 15; 20 open cells: the diagonal, cls -> x[0], x[1], the pair).
consumer_builds_against_install() {
  "$cmake" --install "$build_dir" --prefix "$d/prefix" >/dev/null
  "$cmake" -S "$source_dir/tests/consumer" -B "$d/build" -DCMAKE_PREFIX_PATH="$d/prefix" \
    -DCMAKE_BUILD_TYPE=Release >/dev/null
  "$cmake" --build "$d/build" >/dev/null
  "$d/build/consumer" "$source_dir/specs/gotu/parity2.mask" | tee "$d/out"
  grep -q 'parity2: N = 16, 20 open cells' "$d/out"
}
# Install the headers alone (component maskprior_headers) and check that each includes only
# installed headers (scripts/check_public_headers.py), and that the internals of a layer stay out
# (the compiler's passes, the supervisor, the IDX reader, train's loop pieces).
public_headers_include_only_public() {
  "$cmake" --install "$build_dir" --prefix "$d" --component maskprior_headers >/dev/null
  "$python" "$source_dir/scripts/check_public_headers.py" "$d/include/maskprior"
  test -f "$d/include/maskprior/compiler/compile.h"
  test -f "$d/include/maskprior/core/layout.h"
  local h
  for h in compiler/ast.h compiler/work.h compiler/shapes.h compiler/parse.h core/supervisor.h \
    tasks/idx_file.h report/stats.h experiments/jobs.h runtime/attention.h; do
    if test -e "$d/include/maskprior/$h"; then
      echo "$h is internal but installed" >&2
      exit 1
    fi
  done
}

"$case_name"
