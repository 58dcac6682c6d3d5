#!/usr/bin/env bash
# `maskc train` end to end: exit codes 0 / 1 (input error) / 2 (usage error) / 130 and 143
# (stopped by --stop-after or SIGINT, by SIGTERM) and the run folder. One case per CTest test
# (tests/cmake/runtime.cmake registers them).
# Usage: train_cli.sh MASKC SOURCE_DIR CASE
set -u  # no pipefail: a case greps what a failing maskc prints
maskc=$1
source_dir=$2
parity2=$source_dir/specs/gotu/parity2.mask
case_name=$3
small=(--n 6 --dim 16 --depth 1 --heads 1 --head-dim 8 --mlp 16 --epochs 2 --batch-size 16
  --threads 1 --device cpu -q)
long=(--n 6 --dim 16 --depth 1 --heads 1 --head-dim 8 --mlp 16 --epochs 100000 --batch-size 16
  --threads 1 --device cpu -q)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

unknown_init_is_usage_error() { expect_exit 2 train --task parity2 --init maskk; }
bad_preset_is_usage_error() { expect_exit 2 train --task parity2 --preset fast; }
unknown_task_is_input_error() { expect_exit 1 train --task parity9 -q; }
bad_range_is_input_error() {
  "$maskc" train --task parity2 --batch-size 0 -q 2>&1 | grep -q 'batch_size must be positive'
}
mask_needs_spec() { "$maskc" train --task parity2 --init mask -q 2>&1 | grep -q 'needs a spec'; }
layout_mismatch() {
  "$maskc" train --task parity2 --spec "$parity2" -D n=7 --init mask "${small[@]}" 2>&1 |
    grep -q 'expects `cls, x\[6\]`'
}
run_folder() {
  "$maskc" train --task parity2 --spec "$parity2" --init mask "${small[@]}" --out "$d/run" ||
    fail "train"
  for f in config.json init.json metrics.jsonl checkpoint.pt summary.json weights.safetensors \
    mask.safetensors; do
    test -s "$d/run/$f" || fail "$f missing"
  done
  test "$(wc -l <"$d/run/metrics.jsonl")" -eq 3 || fail "metrics.jsonl lines"
  "$maskc" train --task parity2 "${small[@]}" --out "$d/run" 2>&1 | grep -q 'already holds a run'
}
# Stopped and resumed, the run ends with exactly the metrics of an uninterrupted one.
stop_and_resume() {
  expect_exit 130 train --task parity2 --spec "$parity2" --init mask "${small[@]}" --stop-after 3 \
    --out "$d/run"
  test ! -f "$d/run/summary.json" || fail "summary.json after --stop-after"
  "$maskc" train --resume "$d/run" -q || fail "resume"
  test -f "$d/run/summary.json" || fail "no summary.json after resume"
  "$maskc" train --task parity2 --spec "$parity2" --init mask "${small[@]}" --out "$d/whole" ||
    fail "uninterrupted run"
  cmp "$d/run/metrics.jsonl" "$d/whole/metrics.jsonl"
}
# SIGTERM (as from a job scheduler) stops cleanly with a checkpoint: exit 143, resumable.
sigterm_checkpoints() {
  "$maskc" train --task parity2 --spec "$parity2" --init mask "${long[@]}" --out "$d/run" &
  local pid=$!
  wait_for "$d/run/init.json"
  kill -TERM "$pid"
  wait "$pid"
  local got=$?
  [[ $got -eq 143 ]] || fail "SIGTERM exit $got, not 143"
  test -f "$d/run/checkpoint.pt" || fail "no checkpoint"
  test ! -f "$d/run/summary.json" || fail "summary.json after SIGTERM"
  expect_exit 130 train --resume "$d/run" --stop-after 1 -q
}
# Every floating setting must be finite: `--lr nan` is a usage error and leaves no run folder.
non_finite_is_usage_error() {
  for v in nan inf; do
    "$maskc" train --task parity2 --lr "$v" -q --out "$d/run" 2>"$d/err"
    local got=$?
    [[ $got -eq 2 ]] || fail "--lr $v exited $got"
    grep -q 'must be a finite number' "$d/err" || fail "--lr $v message"
    test ! -e "$d/run" || fail "--lr $v left a run folder"
  done
  expect_exit 2 train --task parity2 --qk-contrast nan -q
}
# A run killed before its first checkpoint (only config.json, fingerprints.json, init.json,
# metrics.jsonl): --resume says what to do, and a new run takes the folder over instead of
# refusing it.
run_without_checkpoint_starts_again() {
  "$maskc" train --task parity2 "${small[@]}" --out "$d/run" || fail "train"
  rm "$d/run/checkpoint.pt" "$d/run/checkpoint.json" "$d/run/summary.json" \
    "$d/run/weights.safetensors"
  test "$(ls "$d/run" | wc -l)" -eq 4 || fail "files left"  # hidden files (the lock) aside
  "$maskc" train --resume "$d/run" 2>"$d/err"
  local got=$?
  [[ $got -eq 1 ]] || fail "resume exited $got"
  grep -q 'never reached a checkpoint.*start it again' "$d/err" || fail "resume message"
  "$maskc" train --task parity2 "${small[@]}" --out "$d/run" 2>"$d/err" || fail "new run"
  grep -q 'holds a run that never reached a checkpoint; starting it again' "$d/err" ||
    fail "take-over message"
  test -s "$d/run/summary.json" || fail "no summary.json"
  test "$(wc -l <"$d/run/metrics.jsonl")" -eq 3 || fail "metrics.jsonl lines"
}
# --answer-order msb --operand-order lsb --loss-rows all: the shipped addition spec, compiled with
# its digits the run's way round, trains a few steps end to end; config.json and the run's mask
# say so. The settings are arithmetic's: a Boolean task refuses them (exit 1, nothing written).
arithmetic_orders_and_loss_rows() {
  local addition=$source_dir/specs/arith/addition.mask
  "$maskc" train --task addition --spec "$addition" --init mask --answer-order msb \
    --operand-order lsb --loss-rows all --train-fraction 0.0002 --test-size 32 --dim 16 \
    --depth 1 --heads 2 --head-dim 8 --mlp 16 --steps 3 --batch-size 32 --threads 1 \
    --device cpu -q --out "$d/run" || fail "train"
  grep -q '"answer_order": "msb"' "$d/run/config.json" || fail "answer_order in config.json"
  grep -q '"operand_order": "lsb"' "$d/run/config.json" || fail "operand_order in config.json"
  grep -q '"loss_rows": "all"' "$d/run/config.json" || fail "loss_rows in config.json"
  grep -q '"steps": 3' "$d/run/summary.json" || fail "steps"
  "$maskc" show "$d/run/mask.safetensors" >"$d/show" || fail "show"
  grep -q 'a\[3\] @0..2 lsb_first' "$d/show" || fail "a's order in the run's mask"
  grep -q 'c\[4\] @8..11 msb_first' "$d/show" || fail "c's order in the run's mask"
  "$maskc" train --task parity2 --answer-order msb -q --out "$d/bool" 2>"$d/err"
  local got=$?
  [[ $got -eq 1 ]] || fail "parity2 --answer-order msb exited $got"
  grep -q 'applies only to the arithmetic family.*boolean family' "$d/err" || fail "message"
  test ! -e "$d/bool" || fail "a refused run left a folder"
}

"$case_name"
