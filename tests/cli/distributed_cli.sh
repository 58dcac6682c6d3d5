#!/usr/bin/env bash
# Data-parallel training and split suites end to end (tests/cmake/distributed.cmake, see
# docs/distributed.md): CPU, loopback, tiny models, one thread per process. One case per CTest test.
# Usage: distributed_cli.sh MASKC SOURCE_DIR PYTHON CASE
set -u
maskc=$1
source_dir=$2
python=$3
case_name=$4
spec=$source_dir/specs/gotu/parity2.mask
compare=$source_dir/tests/scripts/compare_runs.py
# batch 15: uneven shards (8 + 7 rows) and an uneven last batch of every epoch.
small=(--task parity2 --spec "$spec" --init mask --n 6 --dim 16 --depth 1 --heads 1 --head-dim 8
  --mlp 16 --epochs 3 --batch-size 15 --threads 1 --device cpu -q)
long=(--task parity2 --spec "$spec" --init mask --n 6 --dim 16 --depth 1 --heads 1 --head-dim 8
  --mlp 16 --epochs 100000 --batch-size 16 --threads 1 --device cpu -q)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# A free port on loopback for the cases that start ranks by hand.
free_port() {
  "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# 2 processes x global batch 15 end where 1 process with batch 15 ends (weights, loss, accuracy),
# and rank 1 writes no files.
two_ranks_match_one_process() {
  cd "$d" || exit 1
  "$maskc" train "${small[@]}" --out "$d/one" || fail "one process"
  "$maskc" launch --nproc 2 -- train "${small[@]}" --out "$d/two" || fail "two ranks"
  test "$(ls "$d" | wc -l)" -eq 2 || fail "files beside the runs: $(ls "$d")"
  "$python" "$compare" "$d/one" "$d/two" --rtol 1e-5 || fail "runs differ"
}

# Stopped (--stop-after) and resumed with 2 ranks: exactly the metrics of an uninterrupted 2-rank
# run; SIGTERM to the launcher reaches every rank (exit 143, a checkpoint); SIGINT to launch's
# whole process group (Ctrl-C at a terminal) stops the run with a checkpoint (exit 130), not twice.
stop_resume_and_sigterm() {
  expect_exit 130 launch --nproc 2 -- train "${small[@]}" --stop-after 4 --out "$d/run"
  test ! -f "$d/run/summary.json" || fail "summary.json after --stop-after"
  "$maskc" launch --nproc 2 -- train --resume "$d/run" -q || fail "resume"
  "$maskc" launch --nproc 2 -- train "${small[@]}" --out "$d/whole" || fail "uninterrupted run"
  cmp "$d/run/metrics.jsonl" "$d/whole/metrics.jsonl" || fail "resumed metrics differ"

  "$maskc" launch --nproc 2 -- train "${long[@]}" --out "$d/long" &
  local pid=$!
  wait_for "$d/long/init.json"
  sleep 0.5
  kill -TERM "$pid"
  wait "$pid"
  local got=$?
  [[ $got -eq 143 ]] || fail "SIGTERM exit $got, not 143"
  test -f "$d/long/checkpoint.pt" || fail "no checkpoint after SIGTERM"

  setsid "$maskc" launch --nproc 2 -- train "${long[@]}" --out "$d/int" &
  pid=$!
  wait_for "$d/int/init.json"
  sleep 0.5
  kill -INT -"$pid"
  wait "$pid"
  got=$?
  [[ $got -eq 130 ]] || fail "SIGINT exit $got, not 130"
  test -f "$d/int/checkpoint.pt" || fail "no checkpoint after SIGINT"
}

# Waits for process $1 to end, at most $2 s: a watchdog against a hang, no measure of speed (a
# busy machine may take long). If it is still running then, fails ($3 says what hung), killing
# it and the processes given after $3.
ends_within() {
  timeout "$2" tail --pid="$1" -f /dev/null
  if [[ $? -eq 124 ]]; then
    kill -KILL "$1" "${@:4}" 2>/dev/null
    fail "$3 did not end within $2 s"
  fi
}

# A rank killed with SIGKILL: the other fails with a clear message because the connection to it
# broke, long before its --dist-timeout of 600 s could end it; a rank that hangs (SIGSTOP): the
# other fails by its --dist-timeout of 4 s, and says so. Rank 1 writes no files (its --out is
# never created). No wall time is asserted: the timeouts and the gloo causes in the message say
# what ended rank 0, and the watchdog only stops a hang.
dead_or_hung_rank_fails_the_others() {
  export WORLD_SIZE=2 MASTER_ADDR=127.0.0.1
  local how p0 p1 rc timeout
  for how in KILL STOP; do
    MASTER_PORT=$(free_port)
    export MASTER_PORT
    timeout=$([[ $how == KILL ]] && echo 600 || echo 4)
    RANK=0 "$maskc" train "${long[@]}" --dist-timeout "$timeout" --out "$d/$how" 2>"$d/err0" &
    p0=$!
    RANK=1 "$maskc" train "${long[@]}" --dist-timeout "$timeout" --out "$d/rank1" &
    p1=$!
    wait_for "$d/$how/init.json"
    sleep 0.5
    kill -"$how" "$p1"
    ends_within "$p0" 40 "$how: rank 0" "$p1"
    wait "$p0"
    rc=$?
    kill -KILL "$p1"
    wait "$p1"
    echo "$how: rank 0 exit $rc"
    cat "$d/err0"
    [[ $rc -eq 1 ]] || fail "$how: rank 0 exit $rc, not 1"
    grep -q "rank 0 of 2: .* failed: another rank stopped or died" "$d/err0" || fail "$how: message"
    if [[ $how == KILL ]]; then  # the broken connection ended it, not the 600 s timeout
      grep -q 'Connection \(reset\|closed\) by peer' "$d/err0" || fail "KILL: the cause"
    else
      grep -q 'within 4 s .*Timed out' "$d/err0" || fail "STOP: rank 0 did not wait for the timeout"
    fi
    test ! -e "$d/rank1" || fail "$how: rank 1 wrote files"
  done
}

# Rank 0 alone (rank 1 never starts) fails by its rendezvous timeout, saying so, with one line and
# no LibTorch backtrace; launch refuses N processes the machine cannot hold before it starts any;
# the launcher's variables are checked at once. No wall time is asserted (the suite runs on busy
# machines): the message says which timeout ended it, and `timeout 300` only stops a hang.
rank_zero_alone_and_bad_worlds() {
  RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(free_port) timeout 300 "$maskc" train \
    "${small[@]}" --dist-timeout 10 --out "$d/alone" 2>"$d/err"
  local rc=$?
  [[ $rc -ne 124 ]] || fail "rank 0 alone did not end with its 10 s timeout"
  [[ $rc -eq 1 ]] || fail "rank 0 alone exited $rc: $(cat "$d/err")"
  grep -q 'did not answer within 10 s' "$d/err" || fail "message: $(cat "$d/err")"
  ! grep -q 'frame #\|Exception raised from' "$d/err" || fail "a backtrace: $(cat "$d/err")"
  [[ $(wc -l <"$d/err") -eq 1 ]] || fail "more than one line: $(cat "$d/err")"
  test ! -e "$d/alone" || fail "rank 0 alone left a run folder"
  # The machine's limits: open files (gloo connects every pair), then processes.
  (ulimit -n 100 && "$maskc" launch --nproc 64 -- train "${small[@]}" --out "$d/many" 2>"$d/err")
  rc=$?
  [[ $rc -eq 1 ]] && grep -q -- "--nproc 64: each process may open 100 files (ulimit -n)" "$d/err" ||
    fail "ulimit -n: exit $rc: $(cat "$d/err")"
  test ! -e "$d/many" || fail "a refused launch left a run folder"
  (ulimit -u 8 && "$maskc" launch --nproc 9 -- train "${small[@]}" --out "$d/many" 2>"$d/err")
  rc=$?
  # root is not held by ulimit -u; everyone else is.
  if [[ $(id -u) -ne 0 ]]; then
    [[ $rc -eq 1 ]] && grep -q -- "at most 8 processes" "$d/err" || fail "ulimit -u: $(cat "$d/err")"
  fi
  WORLD_SIZE=2 "$maskc" train "${small[@]}" --out "$d/ws" 2>"$d/err"
  [[ $? -eq 1 ]] && grep -q "WORLD_SIZE='2' is set but RANK is not" "$d/err" ||
    fail "WORLD_SIZE alone: $(cat "$d/err")"
  # A bad MASTER_ADDR is refused at once: with a 300 s rendezvous timeout, waiting for it would
  # run into `timeout 60` (exit 124), however loaded the machine.
  RANK=1 WORLD_SIZE=2 MASTER_ADDR=999.1.1.1 timeout 60 "$maskc" train "${small[@]}" \
    --dist-timeout 300 --out "$d/ws" 2>"$d/err"
  rc=$?
  [[ $rc -ne 124 ]] || fail "a bad MASTER_ADDR waited"
  [[ $rc -eq 1 ]] && grep -q "'999.1.1.1' (MASTER_ADDR / --master-addr) is not an IPv4" "$d/err" ||
    fail "MASTER_ADDR: exit $rc: $(cat "$d/err")"
  test ! -e "$d/ws" || fail "a refused world left a run folder"
}

# launch passes the ranks' exit status on: input error 1, usage error 2, stopped 130; it runs only
# train and reproduce.
launch_forwards_exit_codes() {
  expect_exit 1 launch --nproc 2 -- train --task parity2 --init mask --spec "$d/missing.mask" -q
  expect_exit 2 launch --nproc 2 -- train --task parity9 -q
  expect_exit 2 launch --nproc 2 -- train --task parity2 --init maskk
  expect_exit 2 launch --nproc 2 -- compile x.mask
  expect_exit 130 launch --nproc 2 -- train "${small[@]}" --stop-after 1
}

# reproduce split over 2 ranks writes the tables of 1 process (which trains its runs in 2 forked
# children: each run is the same single-process run either way, and the case stays short).
reproduce_split_matches() {
  cd "$d" || exit 1
  "$maskc" reproduce demo --only parity2 --epochs 1 --jobs 2 --threads 1 --out "$d/one" \
    >"$d/log" || fail "one process"
  "$maskc" launch --nproc 2 -- reproduce demo --only parity2 --epochs 1 --jobs 1 --threads 1 \
    --out "$d/two" || fail "two ranks"
  cmp "$d/one/results.md" "$d/two/results.md" || fail "results.md differ"
}

# reproduce distill over 2 ranks: the runs of one seed (the source row and the row distilled from
# it) go to one rank, which trains the source first; the tables equal one process's.
reproduce_distill_split_by_seed() {
  cd "$d" || exit 1
  local flags=(--only parity2-distilled --seeds 2 --epochs 1 --threads 1)
  "$maskc" reproduce distill "${flags[@]}" --jobs 2 --out "$d/one" >"$d/log" || fail "one process"
  "$maskc" launch --nproc 2 -- reproduce distill "${flags[@]}" --jobs 1 --out "$d/two" \
    >"$d/log2" 2>&1 || fail "two ranks: $(cat "$d/log2")"
  for seed in 0 1; do
    grep -q "rank $seed: parity2-all-vanilla seed $seed" "$d/log2" &&
      grep -q "rank $seed: parity2-distilled seed $seed" "$d/log2" || fail "seed $seed: $(cat "$d/log2")"
  done
  # Each seed trained on its own distilled spec; the row pools them (only seeds differ).
  grep -Eq '^\| parity2-distilled +\| 2 ' "$d/one/results.md" || fail "$(cat "$d/one/results.md")"
  cmp "$d/one/results.md" "$d/two/results.md" || fail "results.md differ"
}

# The ranks meet through a file in a private folder, and nothing they listen on is reachable from
# another machine: under launch, and started by hand with MASTER_ADDR=127.0.0.1. Launch's folder
# is gone when it ends.
rendezvous_is_private() {
  export TMPDIR=$d/tmp
  mkdir -p "$TMPDIR"
  "$maskc" launch --nproc 2 -- train "${long[@]}" --out "$d/launched" &
  local pid=$! ranks
  wait_for "$d/launched/init.json"
  ranks=$(cat /proc/"$pid"/task/*/children)
  [[ -n $ranks ]] || fail "no ranks under launch"
  # shellcheck disable=SC2086
  "$python" "$source_dir/tests/scripts/listening_sockets.py" $ranks || fail "launch: exposed"
  ls "$TMPDIR"/maskc-launch-*/rendezvous* >/dev/null || fail "no rendezvous file under launch"
  kill -TERM "$pid"
  wait "$pid"
  test -z "$(ls "$TMPDIR")" || fail "left behind: $(ls -R "$TMPDIR")"

  # A --dist-timeout far beyond the watchdog below: rank 1 must learn of rank 0's death, not wait
  # for the timeout.
  export WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29613
  RANK=0 "$maskc" train "${long[@]}" --dist-timeout 600 --out "$d/by-hand" &
  local p0=$!
  RANK=1 "$maskc" train "${long[@]}" --dist-timeout 600 --out "$d/rank1" 2>"$d/err1" &
  local p1=$!
  wait_for "$d/by-hand/init.json"
  "$python" "$source_dir/tests/scripts/listening_sockets.py" "$p0" "$p1" || fail "by hand: exposed"
  test -f "$TMPDIR/maskc-$(id -u)/rendezvous-29613.rank0" ||
    fail "no private rendezvous file"
  test "$(stat -c %a "$TMPDIR/maskc-$(id -u)")" = 700 || fail "folder not private"
  # rank 0 dies: rank 1 learns it (it may be waiting on rank 0 in the store, not in a
  # collective), well before its 600 s timeout, exits 1 saying so and writes nothing.
  kill -KILL "$p0"
  ends_within "$p1" 60 "rank 1 after rank 0 died" "$p0"
  wait "$p1"
  local rc=$?
  [[ $rc -eq 1 ]] || fail "rank 1 exit $rc after rank 0 died, not 1: $(cat "$d/err1")"
  grep -q "rank 1 of 2: .* failed: another rank stopped or died" "$d/err1" ||
    fail "rank 1's message: $(cat "$d/err1")"
  test ! -e "$d/rank1" || fail "rank 1 wrote files"
}

"$case_name"
