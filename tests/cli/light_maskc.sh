#!/usr/bin/env bash
# The light maskc (tests/cmake/cli.cmake): compile/show/validate never load LibTorch, and a build
# without the runtime says why `maskc train` cannot run.
# Usage: light_maskc.sh MASKC CASE
set -u
maskc=$1
case_name=$2

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# The executable does not link LibTorch.
does_not_link_libtorch() {
  ldd "$maskc" >/dev/null || fail "ldd $maskc"
  if ldd "$maskc" | grep -i torch; then fail "maskc links LibTorch"; fi
}
# Without the runtime, `maskc train` says why and exits 2 (usage), writing nothing.
train_without_runtime_says_why() {
  "$maskc" train --task parity2 2>&1 | grep -q MASKPRIOR_WITH_TORCH=OFF || fail "message"
  "$maskc" train --task parity2
  local got=$?
  [[ $got -eq 2 ]] || fail "exit $got, not 2"
}

"$case_name"
