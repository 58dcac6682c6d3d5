# Helpers the end-to-end scripts of tests/cli share (sourced; they set $maskc first).

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Runs maskc with the remaining arguments and fails unless it exits with $1.
expect_exit() {
  local want=$1
  shift
  "$maskc" "$@"
  local got=$?
  [[ $got -eq $want ]] || fail "maskc $* exited $got, not $want"
}

# Waits (at most 120 s) for the file $1.
wait_for() {
  local i=0
  while [[ ! -f $1 && $i -lt 1200 ]]; do
    sleep 0.1
    i=$((i + 1))
  done
}
