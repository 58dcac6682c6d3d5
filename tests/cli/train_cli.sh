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
# Every mistake in the flags is a usage error (exit 2) that names the setting and what it
# allows, and nothing is written.
unknown_task_is_usage_error() {
  "$maskc" train --task parity9 -q --out "$d/run" 2>"$d/err"
  [[ $? -eq 2 ]] && grep -q "unknown task 'parity9' (known: parity2, " "$d/err" ||
    fail "$(cat "$d/err")"
  test ! -e "$d/run" || fail "a refused run left a folder"
}
bad_range_is_usage_error() {
  for args in "--batch-size 0:batch_size must be positive, got 0" \
    "--lr -1:lr must be positive, got -1" "--lr=-0.5:lr must be positive" \
    "--train-fraction 1.5:train_fraction must be in (0, 1], got 1.5" \
    "--attn-dropout 1:attn_dropout must be in \[0, 1), got 1" \
    "--seed -1:seed must be a whole number from 0 to 18446744073709551615, got '-1'" \
    "--seed 99999999999999999999:seed must be a whole number from 0 to" \
    "--seed 1e30:seed must be a whole number" "--epochs 3.5:epochs must be a whole number" \
    "--threads 4294967297:threads must be a whole number from 0 to 1024" \
    "--threads 100000:threads must be from 0 (every core) to 1024, got 100000" \
    "--epochs 0:--epochs 0 trains no step" "--init mask:--init mask needs a spec" \
    "--spec $parity2 --data:--data needs --predict SPAN"; do
    local flags=${args%%:*} want=${args#*:}
    [[ $flags == *--data ]] && flags="$flags $d/x.txt" || flags="--task parity2 $flags"
    # shellcheck disable=SC2086  # the flags split into words
    "$maskc" train $flags -q --out "$d/run" 2>"$d/err"
    local got=$?
    [[ $got -eq 2 ]] || fail "$flags exited $got: $(cat "$d/err")"
    grep -q -- "$want" "$d/err" || fail "$flags: $(cat "$d/err")"
    test ! -e "$d/run" || fail "$flags left a run folder"
  done
}
# An unknown flag is named with the nearest flag, an unknown command with the commands.
unknown_flag_or_command_says_what_was_meant() {
  "$maskc" train --task parity2 --lrr 0.1 -q 2>"$d/err"
  [[ $? -eq 2 ]] && grep -q -- "--lrr" "$d/err" && grep -q "did you mean --lr (not '--lrr')?" \
    "$d/err" || fail "--lrr: $(cat "$d/err")"
  "$maskc" train --task parity2 --log-evry 5 -q 2>"$d/err"
  [[ $? -eq 2 ]] && grep -q "did you mean --log-every" "$d/err" || fail "$(cat "$d/err")"
  "$maskc" compile --opne 5 "$parity2" 2>"$d/err"
  [[ $? -eq 2 ]] && grep -q "did you mean --open" "$d/err" || fail "compile: $(cat "$d/err")"
  "$maskc" sweep --grid lr=0.1 --out "$d/s" -- --task parity2 --epocs 2 2>"$d/err"
  [[ $? -eq 2 ]] && grep -q "did you mean --epochs" "$d/err" || fail "sweep: $(cat "$d/err")"
  "$maskc" nosuchcmd 2>"$d/err"
  [[ $? -eq 2 ]] && grep -q "unknown command 'nosuchcmd'; the commands are compile, show, " \
    "$d/err" && grep -q "train, reproduce, sweep" "$d/err" || fail "nosuchcmd: $(cat "$d/err")"
  "$maskc" trian --task parity2 2>"$d/err"
  [[ $? -eq 2 ]] && grep -q "unknown command 'trian' (did you mean train?)" "$d/err" ||
    fail "trian: $(cat "$d/err")"
  "$maskc" train --task parity2 --xyzzy 1 -q 2>"$d/err"
  [[ $? -eq 2 ]] && ! grep -q "did you mean" "$d/err" || fail "nothing near: $(cat "$d/err")"
}
# --config FILE: a run's config.json (or --print-config's output) gives every setting; a flag
# typed beside it wins; a key that is no setting, a file that is not an object, and --config with
# --resume are refused, and nothing is written.
config_file_gives_the_settings() {
  "$maskc" train --task parity2 --lr 0.003 "${small[@]}" --out "$d/first" || fail "first run"
  "$maskc" train --config "$d/first/config.json" --out "$d/again" --seed 7 || fail "--config run"
  grep -q '"lr": 0.003' "$d/again/config.json" || fail "lr not from the file"
  grep -q '"seed": 7' "$d/again/config.json" || fail "--seed did not win"
  "$maskc" train --task parity2 "${small[@]}" --print-config >"$d/printed.json" || fail "print"
  "$maskc" train --config "$d/printed.json" --print-config | grep -q '"task": "parity2"' ||
    fail "--print-config's output as --config"
  printf '{"task": "parity2", "lr_typo": 1}' >"$d/typo.json"
  "$maskc" train --config "$d/typo.json" --out "$d/typo" 2>"$d/err"
  [[ $? -eq 1 ]] && grep -q "'lr_typo' is no setting" "$d/err" && test ! -e "$d/typo" ||
    fail "unknown key: $(cat "$d/err")"
  printf '[1, 2]' >"$d/list.json"
  "$maskc" train --config "$d/list.json" --out "$d/list" 2>"$d/err"
  [[ $? -eq 1 ]] && grep -q "not a JSON object of settings" "$d/err" || fail "list: $(cat "$d/err")"
  "$maskc" train --resume "$d/first" --config "$d/printed.json" 2>"$d/err"
  [[ $? -eq 2 ]] && grep -q -- "--config cannot be given" "$d/err" || fail "resume: $(cat "$d/err")"
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
  test ! -e "$d/run/.lock" || fail "the lock file outlived the run"
  "$maskc" train --task parity2 "${small[@]}" --out "$d/run" 2>&1 | grep -q 'already holds a run'
  test ! -e "$d/run/.lock" || fail "the lock file outlived a refused run"
}
# The run folder explains itself: the step log (every --log-every steps and the last: the step's
# loss, learning rate, gradient norm, seconds; JSON lines and CSV), the spec's source, and a
# config.json with what the run made of its settings and without those parity2 does not read.
run_folder_explains_itself() {
  "$maskc" train --task parity2 --spec "$parity2" --init mask "${small[@]}" --log-every 2 \
    --out "$d/run" || fail "train"
  # 48 rows in batches of 16: 3 steps an epoch, 6 in all; logged at 2, 4, 6.
  [[ $(cut -d, -f1 "$d/run/steps.csv" | tr '\n' ' ') == "step 2 4 6 " ]] ||
    fail "steps.csv: $(cat "$d/run/steps.csv")"
  head -1 "$d/run/steps.csv" | grep -qx 'step,loss,lr,grad_norm,seconds' || fail "csv header"
  local number='[0-9.e-]*'
  [[ $(grep -c "^{\"grad_norm\":$number,\"loss\":$number,\"lr\":$number,\"seconds\":$number,\"step\":[246]}\$" \
    "$d/run/steps.jsonl") -eq 3 ]] || fail "steps.jsonl: $(cat "$d/run/steps.jsonl")"
  awk -F, 'NR > 1 && !($4 > 0) { exit 1 }' "$d/run/steps.csv" || fail "a zero gradient norm"
  cmp "$d/run/spec.mask" "$parity2" || fail "spec.mask is not the spec's source"
  local c=$d/run/config.json
  grep -q '"log_every": 2' "$c" || fail "log_every in config.json"
  grep -q '"resolved": {' "$c" || fail "no resolved values: $(cat "$c")"
  grep -q '"device": "cpu"' "$c" && grep -q '"mask_open": 10.0' "$c" &&
    grep -q '"mask_close": -10.0' "$c" && grep -q '"steps": 6' "$c" || fail "resolved: $(cat "$c")"
  ! grep -q '"operand_order"\|"loss_rows"\|"data"\|"truth_table"' "$c" ||
    fail "settings parity2 does not read: $(cat "$c")"
  "$maskc" train --task parity2 "${small[@]}" --log-every 0 --out "$d/quiet" || fail "quiet"
  test ! -e "$d/quiet/steps.jsonl" && test ! -e "$d/quiet/spec.mask" ||
    fail "--log-every 0 or no spec wrote files"
}
# The progress and evaluation lines name their numbers: the loss of the last step, and the mean
# train loss over the steps since the last evaluation, with the family's metrics.
progress_names_its_numbers() {
  "$maskc" train --task parity2 "${small[@]:0:${#small[@]}-1}" 2>"$d/err" || fail "train"
  grep -q '^step 6/6 last-step loss [0-9.]* ETA' "$d/err" || fail "progress: $(cat "$d/err")"
  grep -q '^step 6: mean train loss [0-9.]* over steps 4-6, accuracy [0-9.]*, unseen accuracy' \
    "$d/err" || fail "evaluation: $(cat "$d/err")"
}
# Stopped and resumed, the run ends with exactly the metrics of an uninterrupted one.
stop_and_resume() {
  expect_exit 130 train --task parity2 --spec "$parity2" --init mask "${small[@]}" --stop-after 3 \
    --out "$d/run"
  test ! -f "$d/run/summary.json" || fail "summary.json after --stop-after"
  test ! -e "$d/run/.lock" || fail "the lock file outlived a stopped run"
  "$maskc" train --resume "$d/run" -q || fail "resume"
  test -f "$d/run/summary.json" || fail "no summary.json after resume"
  "$maskc" train --task parity2 --spec "$parity2" --init mask "${small[@]}" --out "$d/whole" ||
    fail "uninterrupted run"
  cmp "$d/run/metrics.jsonl" "$d/whole/metrics.jsonl"
}
# Resumed, the step log goes on from the checkpoint: lines a killed run logged after its
# checkpoint are cut, no step is logged twice, and the losses are an uninterrupted run's.
resume_continues_the_step_log() {
  local run=(--task parity2 --spec "$parity2" --init mask "${small[@]}" --log-every 1)
  expect_exit 130 train "${run[@]}" --stop-after 3 --out "$d/run"
  # As if killed after logging step 4 but before its checkpoint.
  echo '{"grad_norm":1,"loss":9,"lr":1,"seconds":1,"step":4}' >>"$d/run/steps.jsonl"
  echo '4,9,1,1,1' >>"$d/run/steps.csv"
  printf '5,9,1' >>"$d/run/steps.csv"  # and one line cut short
  "$maskc" train --resume "$d/run" -q || fail "resume"
  "$maskc" train "${run[@]}" --out "$d/whole" || fail "uninterrupted run"
  [[ $(cut -d, -f1 "$d/run/steps.csv" | tr '\n' ' ') == "step 1 2 3 4 5 6 " ]] ||
    fail "steps.csv: $(cat "$d/run/steps.csv")"
  cmp <(cut -d, -f1-4 "$d/run/steps.csv") <(cut -d, -f1-4 "$d/whole/steps.csv") ||
    fail "losses differ from an uninterrupted run"
  [[ $(grep -c . "$d/run/steps.jsonl") -eq 6 ]] || fail "steps.jsonl: $(cat "$d/run/steps.jsonl")"
  ! grep -q '"loss":9' "$d/run/steps.jsonl" || fail "a line after the checkpoint survived"
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
  test ! -e "$d/run/.lock" || fail "the lock file outlived SIGTERM"
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
  # Flags outside the config table too (CLI::Range alone lets NaN through): each is refused for
  # its value alone (the same commands with 1 pass the flag checks).
  for v in nan 1; do
    "$maskc" train --task parity2 --dist-timeout $v --print-config >/dev/null 2>"$d/err"
    [[ $? -eq $([[ $v == nan ]] && echo 2 || echo 0) ]] || fail "--dist-timeout $v: $(cat "$d/err")"
    "$maskc" show "$parity2" --diff "$parity2" --tolerance $v >/dev/null 2>"$d/err"
    [[ $? -eq $([[ $v == nan ]] && echo 2 || echo 0) ]] || fail "--tolerance $v: $(cat "$d/err")"
  done
  "$maskc" launch --nproc 1 --kill-after nan -- train --task parity2 -q --out "$d/run" 2>"$d/err"
  [[ $? -eq 2 ]] && grep -q "kill-after" "$d/err" || fail "--kill-after nan: $(cat "$d/err")"
  test ! -e "$d/run" || fail "--kill-after nan left a run folder"
}
# A config.json edited to ask for 1,000,000 threads is refused on --resume (it created 32,000
# threads before).
resumed_threads_are_capped() {
  expect_exit 130 train --task parity2 "${small[@]}" --stop-after 1 --out "$d/run"
  sed -i 's/"threads": 1,/"threads": 1000000,/' "$d/run/config.json"
  grep -q '"threads": 1000000' "$d/run/config.json" || fail "the edit did not take"
  "$maskc" train --resume "$d/run" -q 2>"$d/err"
  local got=$?
  [[ $got -eq 1 ]] || fail "resume exited $got: $(cat "$d/err")"
  grep -q "threads must be from 0 (every core) to 1024, got 1000000" "$d/err" ||
    fail "$(cat "$d/err")"
}
# A PNG is written only to a .png name; `reproduce` and `sweep --device cuda` without CUDA stop
# before their first run; progress lines show the --out path escaped.
cli_outputs_are_checked() {
  "$maskc" show "$parity2" --png "$d/x.jpg" 2>"$d/err"
  [[ $? -eq 2 ]] && grep -q "x.jpg' does not end in .png" "$d/err" || fail "$(cat "$d/err")"
  test ! -e "$d/x.jpg" || fail "wrote x.jpg"
  if ! nvidia-smi -L >/dev/null 2>&1; then  # no GPU here: --device cuda is a clear error
    "$maskc" train --task parity2 "${small[@]/cpu/cuda}" --out "$d/t" 2>"$d/err"
    [[ $? -eq 1 ]] && grep -q -- "--device cuda: no GPU is present" "$d/err" ||
      fail "train: $(cat "$d/err")"
    test ! -e "$d/t" || fail "train --device cuda left a folder"
    "$maskc" reproduce demo --device cuda --out "$d/r" 2>"$d/err"
    [[ $? -eq 1 ]] && grep -q -- "--device cuda: no GPU is present" "$d/err" ||
      fail "reproduce: $(cat "$d/err")"
    test ! -e "$d/r" || fail "reproduce --device cuda left a folder"
    "$maskc" sweep --grid lr=0.1 --out "$d/s" -- --task parity2 --device cuda 2>"$d/err"
    [[ $? -eq 1 ]] && grep -q -- "--device cuda: no GPU is present" "$d/err" ||
      fail "sweep: $(cat "$d/err")"
  fi
  local out=$d/$'bell\a'
  "$maskc" train --task parity2 "${small[@]}" --out "$out" >"$d/log" 2>&1 || fail "train"
  grep -q 'run folder .*bell\\x07' "$d/log" || fail "not escaped: $(cat -v "$d/log")"
  ! grep -q $'\a' "$d/log" || fail "a raw BEL byte in the output"
}
# A run killed before its first checkpoint (only config.json, fingerprints.json, init.json,
# metrics.jsonl): --resume says what to do, and a new run takes the folder over instead of
# refusing it.
run_without_checkpoint_starts_again() {
  "$maskc" train --task parity2 "${small[@]}" --out "$d/run" || fail "train"
  rm "$d/run/checkpoint.pt" "$d/run/checkpoint.json" "$d/run/summary.json" \
    "$d/run/weights.safetensors"
  # config.json, fingerprints.json, init.json, metrics.jsonl and the step log (the lock aside)
  test "$(ls "$d/run" | wc -l)" -eq 6 || fail "files left: $(ls "$d/run")"
  "$maskc" train --resume "$d/run" 2>"$d/err"
  local got=$?
  [[ $got -eq 1 ]] || fail "resume exited $got"
  grep -q 'never reached a checkpoint.*start it again' "$d/err" || fail "resume message"
  "$maskc" train --task parity2 "${small[@]}" --out "$d/run" 2>"$d/err" || fail "new run"
  grep -q 'holds a run that never reached a checkpoint; starting it again' "$d/err" ||
    fail "take-over message"
  test -s "$d/run/summary.json" || fail "no summary.json"
  test "$(wc -l <"$d/run/metrics.jsonl")" -eq 3 || fail "metrics.jsonl lines"
  [[ $(grep -c '^6,' "$d/run/steps.csv") -eq 1 ]] || fail "steps.csv: $(cat "$d/run/steps.csv")"
}
# --answer-order msb --operand-order lsb --loss-rows all: the shipped addition spec, compiled with
# its digits the run's way round, trains a few steps end to end; config.json and the run's mask
# say so. The settings are arithmetic's: a Boolean task refuses them (a usage error, exit 2,
# nothing written).
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
  [[ $got -eq 2 ]] || fail "parity2 --answer-order msb exited $got"
  grep -q 'applies only to the arithmetic family.*boolean family' "$d/err" || fail "message"
  test ! -e "$d/bool" || fail "a refused run left a folder"
}

"$case_name"
