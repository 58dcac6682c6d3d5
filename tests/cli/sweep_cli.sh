#!/usr/bin/env bash
# `maskc sweep` end to end (tests/cmake/sweep.cmake): one row per combination of settings, resume
# and reuse, Slurm array shards, a --data sweep, usage errors, --dry-run, ranks under maskc launch.
# Tiny parity2 runs, one thread each. One case per CTest test.
# Usage: sweep_cli.sh MASKC SOURCE_DIR CASE PYTHON
set -u  # no pipefail: a case greps what a failing maskc prints
maskc=$1
source_dir=$2
spec=$source_dir/specs/gotu/parity2.mask
case_name=$3
python=$4
small=(--task parity2 --spec "$spec" --n 6 --dim 16 --depth 1 --heads 1 --head-dim 8 --mlp 16
  --epochs 2 --batch-size 8 --threads 1 --device cpu -q)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d" || exit 1

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# Sets `rest` to the flags of `small` but flag $1 and its value.
small_without() {
  rest=()
  local i
  for ((i = 0; i < ${#small[@]}; i++)); do
    if [[ ${small[i]} == "$1" ]]; then i=$((i + 1)); else rest+=("${small[i]}"); fi
  done
}

# The data rows of the results table in $1 (lines starting "| " that are not the header).
table_rows() { grep '^| ' "$1" | grep -v '^| run ' ; }

# 2 inits × 2 learning rates × 2 seeds in 2 processes: 4 rows of 2 seeds, never pooled; folders
# named by the settings; --report plots the metric against the swept learning rate.
rows_one_per_setting() {
  "$maskc" sweep --grid init=vanilla,mask --grid lr=0.001,0.01 --seeds 2 --jobs 2 --out s \
    --report -- "${small[@]}" >log || fail "sweep: $(cat log)"
  for name in init=vanilla,lr=0.001 init=vanilla,lr=0.01 init=mask,lr=0.001 init=mask,lr=0.01; do
    for seed in 0 1; do test -f "s/$name/seed$seed/summary.json" || fail "no $name/seed$seed"; done
    [[ $(table_rows s/results.md | grep -c "^| $name *| 2 ") -eq 1 ]] || fail "row $name"
  done
  [[ $(table_rows s/results.md | wc -l) -eq 4 ]] || fail "$(cat s/results.md)"
  "$python" - s/results.json <<'PY' || fail "results.json"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert len(rows) == 4, rows
for row in rows:
    assert row["seeds"] == [0, 1], row
    init, lr = row["settings"]["init"], row["settings"]["lr"]
    assert row["label"] == f"init={init},lr={lr}", row
PY
  test -f s/REPORT.md || fail "no REPORT.md"
  grep -q 'against a setting, panels: lr](plots/parity2-by-setting.png)' s/REPORT.md ||
    fail "no plot against lr"
  test -s s/plots/parity2-by-setting.png || fail "plot file"
  # scripts/keep_runs.sh keeps the small files of each run in one archive (runs.jsonl.gz), byte
  # for byte (parity2 has only 4 Fourier coefficients), beside the sweep's results.json, and a
  # report reads them; weights stay behind.
  bash "$source_dir/scripts/keep_runs.sh" s kept >log || fail "keep_runs: $(cat log)"
  "$python" - kept/runs.jsonl.gz s >log <<'PY' || fail "archive: $(cat log)"
import gzip, json, sys
runs = {r["path"]: r["files"] for r in map(json.loads, gzip.open(sys.argv[1], "rt"))}
assert len(runs) == 8 and all("summary.json" in f for f in runs.values()), sorted(runs)
kept = runs["runs/init=mask,lr=0.01/seed1"]["metrics.jsonl"]
assert kept == open(sys.argv[2] + "/init=mask,lr=0.01/seed1/metrics.jsonl").read(), "changed"
assert not any(n.endswith(".safetensors") or n.startswith("checkpoint")
               for f in runs.values() for n in f), "weights kept"
PY
  test "$(ls kept | tr '\n' ' ')" = "results.json runs.jsonl.gz " || fail "kept $(ls kept)"
  "$maskc" report kept >log || fail "report of kept runs: $(cat log)"
  # 4 rows each in the results and settings tables; 2 in "does the prior help?" (mask against
  # vanilla at each lr).
  [[ $(grep -c '^| runs/init=' kept/REPORT.md) -eq 10 ]] || fail "$(cat kept/REPORT.md)"
  [[ $(grep -c '^| runs/init=mask,lr=[0-9.]* | runs/init=vanilla,lr=' kept/REPORT.md) -eq 2 ]] ||
    fail "does the prior help: $(cat kept/REPORT.md)"
  bash "$source_dir/scripts/keep_runs.sh" nothing-here kept2 2>/dev/null
  [[ $? -eq 2 ]] || fail "keep_runs of no folder"
}

# --config FILE after --: a run's config.json gives the base (its folder and seed ignored), the
# grid sweeps a key the file holds, and a flag typed beside it that the grid sweeps is refused.
config_file_is_the_base() {
  "$maskc" train "${small[@]}" --lr 0.002 --out first >log || fail "first run: $(cat log)"
  "$maskc" sweep --grid init=vanilla,mask --seeds 1 --out s -- --config first/config.json \
    >log 2>&1 || fail "sweep: $(cat log)"
  grep -q '"lr": 0.002' s/init=mask/seed0/config.json || fail "lr not from the file"
  "$maskc" sweep --grid lr=0.001,0.003 --seeds 1 --out s2 -- --config first/config.json >log 2>&1 ||
    fail "a grid over a key of the file: $(cat log)"
  grep -q '"lr": 0.003' s2/lr=0.003/seed0/config.json || fail "the grid did not win"
  "$maskc" sweep --grid lr=0.001,0.003 --seeds 1 --out s3 -- --config first/config.json \
    --lr 0.1 >log 2>&1
  [[ $? -eq 2 ]] && grep -q "swept and also given" log || fail "typed and swept: $(cat log)"
}

# Stopped after 2 steps (--stop-after reaches every run), the sweep resumes the stopped run and
# trains the rest; a third time nothing is trained again.
# A second sweep into the same folder over a sub-grid (more seeds for one cell, a new value) adds
# to the tables: every finished run of both is a row, none is lost; other keys are refused.
sub_grid_extends_the_tables() {
  "$maskc" sweep --grid init=vanilla,mask --jobs 1 --out s -- "${small[@]}" >log ||
    fail "first: $(cat log)"
  "$maskc" sweep --grid init=mask,mask-fixed --seeds 2 --jobs 1 --out s -- "${small[@]}" >log ||
    fail "sub-grid: $(cat log)"
  test -f s/init=mask/seed1/summary.json || fail "no second seed of mask"
  [[ $(table_rows s/results.md | wc -l) -eq 3 ]] || fail "rows: $(cat s/results.md)"
  table_rows s/results.md | grep -q '^| init=vanilla *| 1 ' || fail "vanilla lost: $(cat s/results.md)"
  table_rows s/results.md | grep -q '^| init=mask *| 2 ' || fail "mask: $(cat s/results.md)"
  table_rows s/results.md | grep -q '^| init=mask-fixed *| 2 ' || fail "fixed: $(cat s/results.md)"
  grep -q 'sweeps into this folder, up to 2 seeds each' s/results.md || fail "$(head -3 s/results.md)"
  "$python" - s/results.json <<'PY' || fail "results.json"
import json, sys
results = json.load(open(sys.argv[1]))
assert results["grid"] == [{"key": "init", "values": ["vanilla", "mask", "mask-fixed"]}], results
assert [r["seeds"] for r in results["rows"]] == [[0], [0, 1], [0, 1]], results["rows"]
PY
  cp s/results.md before.md
  "$maskc" sweep --grid lr=0.01 --jobs 1 --out s -- "${small[@]}" >log 2>err
  [[ $? -eq 1 ]] && grep -q 'holds the results of another sweep' err || fail "other keys: $(cat err)"
  cmp before.md s/results.md || fail "the tables were overwritten"
}

resume_reuses_finished_runs() {
  expect_exit 1 sweep --grid init=vanilla,mask --jobs 1 --out s -- "${small[@]}" --stop-after 2 \
    >log
  test -f s/init=vanilla/seed0/checkpoint.pt || fail "no checkpoint of the stopped run"
  test ! -f s/init=vanilla/seed0/summary.json || fail "the stopped run finished"
  "$maskc" sweep --grid init=vanilla,mask --jobs 1 --out s -- "${small[@]}" >log ||
    fail "second sweep: $(cat log)"
  test -f s/init=vanilla/seed0/summary.json || fail "not resumed"
  test -f s/init=mask/seed0/summary.json || fail "not trained"
  # Resumed, not restarted: step 0 was measured once.
  "$python" -c 'import json, sys
steps = [json.loads(line)["step"] for line in open(sys.argv[1])]
assert steps.count(0) == 1 and steps == sorted(steps), steps' s/init=vanilla/seed0/metrics.jsonl ||
    fail "restarted"
  local before
  before=$(stat -c %y s/*/seed0/summary.json s/*/seed0/metrics.jsonl)
  cp s/results.md first.md
  "$maskc" sweep --grid init=vanilla,mask --jobs 2 --out s -- "${small[@]}" >log ||
    fail "third sweep"
  [[ $(stat -c %y s/*/seed0/summary.json s/*/seed0/metrics.jsonl) == "$before" ]] ||
    fail "a finished run was trained again"
  grep -q 'started' log && fail "a process was started: $(cat log)"
  cmp first.md s/results.md || fail "the table changed"
  # Other settings for the same folder are refused, not mixed in.
  "$maskc" sweep --grid init=vanilla,mask --jobs 1 --out s -- "${small[@]}" --lr 0.5 2>err
  [[ $? -eq 1 ]] && grep -q 'was started with lr' err || fail "other settings: $(cat err)"
}

# Runs stopped by --stop-after are interrupted, not failed, with --jobs 1 and --jobs 2 alike: the
# sweep says to run it again (exit 1), names no failed run, and the same command without
# --stop-after resumes the stopped runs from their checkpoints.
stop_after_is_interrupted_with_jobs() {
  local jobs rc
  for jobs in 1 2; do
    "$maskc" sweep --grid init=vanilla,mask --jobs "$jobs" --out "s$jobs" -- "${small[@]}" \
      --stop-after 2 >log 2>err
    rc=$?
    [[ $rc -eq 1 ]] || fail "--jobs $jobs: exit $rc: $(cat log err)"
    grep -q '^interrupted: run the same command again to continue$' log ||
      fail "--jobs $jobs: not interrupted: $(cat log err)"
    ! grep -qi 'failed' log err || fail "--jobs $jobs: reported as failed: $(cat log err)"
    test -f "s$jobs/init=vanilla/seed0/checkpoint.pt" || fail "--jobs $jobs: no checkpoint"
    test ! -f "s$jobs/init=vanilla/seed0/summary.json" || fail "--jobs $jobs: the run finished"
    "$maskc" sweep --grid init=vanilla,mask --jobs "$jobs" --out "s$jobs" -- "${small[@]}" >log ||
      fail "--jobs $jobs: the second sweep: $(cat log)"
    "$python" -c 'import json, sys
steps = [json.loads(line)["step"] for line in open(sys.argv[1])]
assert steps.count(0) == 1 and steps == sorted(steps), steps' "s$jobs/init=vanilla/seed0/metrics.jsonl" ||
      fail "--jobs $jobs: restarted, not resumed"
    [[ $(table_rows "s$jobs/results.md" | wc -l) -eq 2 ]] || fail "$(cat "s$jobs/results.md")"
  done
}

# The Slurm array script of --emit-slurm, its 2 tasks run by hand (SLURM_ARRAY_TASK_ID of
# SLURM_ARRAY_TASK_COUNT): each trains its share, every run once; the table equals one process's.
array_shards_cover_every_run() {
  local grid=(--grid init=vanilla,mask --grid lr=0.001,0.01 --jobs 1 --threads 1)
  "$maskc" sweep "${grid[@]}" --out a --emit-slurm job.sh --shards 2 -- "${small[@]}" >log ||
    fail "emit: $(cat log)"
  grep -q '^#SBATCH --array=0-1$' job.sh || fail "array: $(cat job.sh)"
  test ! -e a || fail "--emit-slurm trained"
  SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=2 bash job.sh >log0 || fail "task 0: $(cat log0)"
  test ! -e a/results.md || fail "task 0 wrote the table before the last run"
  SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 bash job.sh >log1 || fail "task 1: $(cat log1)"
  [[ $(grep -c -- '->' log0) -eq 2 && $(grep -c -- '->' log1) -eq 2 ]] || fail "shares"
  [[ $(cat log0 log1 | grep -- '->' | sort -u | wc -l) -eq 4 ]] || fail "a run twice"
  grep -q 'init=vanilla,lr=0.001 seed 0' log0 && grep -q 'init=vanilla,lr=0.01 seed 0' log1 ||
    fail "runs i, i + 2, ..."
  "$maskc" sweep "${grid[@]}" --out one -- "${small[@]}" >log || fail "one process"
  cmp a/results.md one/results.md || fail "results.md differ"
}

# A sweep of your own data (docs/your-data.md): a --data file and its spec, init swept.
data_file_sweep() {
  printf 'mask rev\ntokens a[3], eq, c[3]\nhard causal\nopen diagonal\n' >rev.mask
  printf '1 2 3 = 3 2 1\n4 5 6 = 6 5 4\n7 8 9 = 9 8 7\n2 5 8 = 8 5 2\n' >train.txt
  "$maskc" sweep --grid init=vanilla,mask-fixed --jobs 1 --out s --report -- --data train.txt \
    --spec rev.mask --predict c --dim 16 --depth 1 --heads 1 --head-dim 8 --mlp 16 --epochs 1 \
    --threads 1 --device cpu -q >log || fail "sweep: $(cat log)"
  [[ $(table_rows s/results.md | wc -l) -eq 2 ]] || fail "$(cat s/results.md)"
  grep -q '^| init=mask-fixed ' s/results.md || fail "row"
  grep -q '^## train.txt with rev.mask$' s/REPORT.md || fail "heading: $(grep '^##' s/REPORT.md)"
}

# Unknown keys, bad values and combinations that cannot run are usage errors (2) that name the
# key and what it takes, before anything is written; a missing spec file is an input error (1).
bad_grid_is_usage_error() {
  "$maskc" sweep --grid nope=1 --out s -- "${small[@]}" 2>err
  [[ $? -eq 2 ]] && grep -q "unknown key 'nope'" err && grep -q 'pos_init_std\|init, ' err ||
    fail "unknown key: $(cat err)"
  "$maskc" sweep --grid init=vanilla,maskk --out s -- "${small[@]}" 2>err
  [[ $? -eq 2 ]] && grep -q "'maskk' is not one of vanilla" err || fail "bad value: $(cat err)"
  "$maskc" sweep --grid lr=0.1,-1 --out s -- "${small[@]}" 2>err
  [[ $? -eq 2 ]] && grep -q 'combination lr=-1: lr must be positive' err || fail "$(cat err)"
  expect_exit 2 sweep --grid seed=1,2 --out s -- "${small[@]}"
  # An execution setting is refused by name, and nothing after `--` is taken for a misspelling.
  "$maskc" sweep --grid precision=fp32,bf16 --out s -- "${small[@]}" 2>err
  [[ $? -eq 2 ]] && grep -q '^--grid: precision cannot be swept' err && ! grep -q 'did you mean' err ||
    fail "execution setting: $(cat err)"
  expect_exit 2 sweep --grid lr=0.1 --out s -- "${small[@]}" --lr 0.2
  expect_exit 2 sweep --grid lr=0.1 --out s -- "${small[@]}" --out elsewhere
  expect_exit 2 sweep --grid lr=0.1 --out s -- "${small[@]}" --no-such-flag
  expect_exit 2 sweep --out s -- "${small[@]}"
  "$maskc" sweep --grid spec=missing.mask --out s -- --task parity2 "${small[@]:4}" 2>err
  [[ $? -eq 1 ]] && grep -q "spec 'missing.mask' is not a file" err || fail "missing: $(cat err)"
  test ! -e s || fail "a refused sweep wrote s"
}

# --dry-run lists every run and estimates the time from a few timed steps of one run of each
# combination, writing nothing; once some have finished it lists them so and counts only the rest.
dry_run_writes_nothing() {
  # 50 epochs: more steps than the 10 timed.
  local long=(--task parity2 --spec "$spec" --n 6 --dim 16 --depth 1 --heads 1 --head-dim 8
    --mlp 16 --epochs 50 --batch-size 8 --threads 1 --device cpu -q)
  "$maskc" sweep --grid init=vanilla,mask --seeds 2 --out s --dry-run -- "${long[@]}" >log ||
    fail "dry run: $(cat log)"
  [[ $(grep -c '^s/init=[a-z]*/seed[01]  to run$' log) -eq 4 ]] || fail "runs: $(cat log)"
  grep -q '^init=mask: about [0-9]* s per run (set-up and step 0 .* ms per step × [0-9]* steps, 50 evaluations × .*; timed on cpu with 1 thread); 2 to run$' \
    log || fail "per combination: $(cat log)"
  grep -q '^4 of 4 runs to run (0 finished): about [0-9]* s of training, about [0-9]* s with --jobs' \
    log || fail "estimate: $(cat log)"
  grep -q '^An estimate, not a measurement: one run of each setting was trained here for 10 steps' \
    log || fail "what it was measured on: $(cat log)"
  test ! -e s || fail "--dry-run wrote s"
  "$maskc" sweep --grid init=vanilla --seeds 2 --jobs 1 --out s -- "${small[@]}" >/dev/null ||
    fail "sweep"
  "$maskc" sweep --grid init=vanilla,mask --seeds 2 --out s --dry-run -- "${small[@]}" >log ||
    fail "dry run: $(cat log)"
  [[ $(grep -c '^s/init=vanilla/seed[01]  finished$' log) -eq 2 ]] || fail "finished: $(cat log)"
  ! grep -q '^init=vanilla:' log || fail "a finished combination was timed: $(cat log)"
  grep -q '^2 of 4 runs to run (2 finished)' log || fail "estimate: $(cat log)"
  test ! -e s/init=mask || fail "--dry-run wrote s/init=mask"
}

# `maskc reproduce SUITE --dry-run`: the same listing and estimate for a suite's runs (one run of
# each row timed), writing nothing.
reproduce_dry_run_writes_nothing() {
  "$maskc" reproduce demo --only parity2 --epochs 1 --jobs 2 --threads 1 --device cpu \
    --out r --dry-run >log || fail "dry run: $(cat log)"
  grep -q '^maskc reproduce demo --dry-run: 2 rows × 1 seed (preset quick) in r$' log ||
    fail "heading: $(cat log)"
  grep -q '^r/parity2-vanilla/seed0  to run$' log && grep -q '^r/parity2-mask/seed0  to run$' log ||
    fail "runs: $(cat log)"
  [[ $(grep -c '^parity2-[a-z]*: about [0-9]* s per run (.*timed on cpu with 1 thread); 1 to run$' \
    log) -eq 2 ]] || fail "per row: $(cat log)"
  grep -q '^2 of 2 runs to run (0 finished): .* with --jobs 2\.$' log || fail "total: $(cat log)"
  test ! -e r || fail "--dry-run wrote r"
}

# Under maskc launch the runs split across 2 ranks; the table equals one process's.
launch_splits_the_runs() {
  local grid=(--grid init=vanilla,mask --jobs 1 --threads 1)
  "$maskc" launch --nproc 2 -- sweep "${grid[@]}" --out two -- "${small[@]}" >log ||
    fail "launch: $(cat log)"
  grep -q 'rank 1: init=mask seed 0' log || fail "rank 1's share: $(cat log)"
  "$maskc" sweep "${grid[@]}" --out one -- "${small[@]}" >log || fail "one process"
  cmp one/results.md two/results.md || fail "results.md differ"
}

# `kill -9` of a sweep with --jobs 2 leaves no run training as an orphan, and no stale lock: each
# run is stopped (SIGTERM: it writes its checkpoint), and the same command can be run again at once.
killed_sweep_reruns_at_once() {
  local long=("${small[@]}")
  long[17]=100000  # --epochs
  "$maskc" sweep --grid init=vanilla,mask --jobs 2 --out s -- "${long[@]}" >log 2>&1 &
  local sweep=$!
  wait_for s/init=vanilla/seed0/metrics.jsonl
  wait_for s/init=mask/seed0/metrics.jsonl
  local runs
  runs=$(cat s/init=vanilla/seed0/.lock s/init=mask/seed0/.lock)
  [[ $(wc -w <<<"$runs") -eq 2 ]] || fail "the runs' processes: $runs"
  kill -KILL "$sweep"
  wait "$sweep"
  # The orphans of old went on training (100,000 epochs); give up on them after a minute.
  local pid i
  for pid in $runs; do
    for ((i = 0; i < 600; i++)); do
      [[ -r /proc/$pid/stat && $(awk '{print $3}' "/proc/$pid/stat") != Z ]] || break
      sleep 0.1
    done
    if [[ $i -eq 600 ]]; then
      kill -KILL $runs
      fail "run $pid kept training after the sweep was killed"
    fi
  done
  "$maskc" sweep --grid init=vanilla,mask --jobs 2 --out s -- "${long[@]}" --stop-after 2 \
    >log 2>err
  local rc=$?
  ! grep -q 'in use' err || fail "refused: $(cat err)"
  [[ $rc -eq 1 ]] && grep -q 'run the same command again' log || fail "rerun exit $rc: $(cat log err)"
  test -f s/init=vanilla/seed0/checkpoint.pt || fail "not resumed from a checkpoint"
}

# Every grid value is checked as `maskc train` checks it before any run starts: a combination that
# trains no step or whose spec is too large at its size, a folder name longer than a file name
# may be; --emit-slurm caps its array at Slurm's default 1001 tasks; a second sweep with another
# grid into the same folder is refused, not mixed in; a file name with a comma is swept as `\,`;
# under maskc launch --dry-run answers once.
grid_checked_up_front() {
  local rest
  small_without --epochs
  "$maskc" sweep --grid epochs=1,0 --out s -- "${rest[@]}" 2>err
  [[ $? -eq 2 ]] && grep -q 'combination epochs=0: --epochs 0 trains no step' err ||
    fail "epochs=0: $(cat err)"
  small_without --n
  "$maskc" sweep --grid n=6,1000000 --out s -- "${rest[@]}" 2>err
  [[ $? -eq 1 ]] && grep -q 'n=1000000: .*above the limit' err || fail "n=1000000: $(cat err)"
  test ! -e s || fail "a refused sweep wrote s"
  local long
  long=$(printf 'p%.0s' {1..250}).mask
  cp "$spec" "$long"
  small_without --spec
  "$maskc" sweep --grid "spec=$spec,$long" --out s -- "${rest[@]}" 2>err
  [[ $? -eq 2 ]] && grep -q 'its folder name has 260 bytes, more than the 255' err ||
    fail "long name: $(cat err)"
  "$maskc" sweep --grid lr=0.001,0.01 --seeds 600 --out big --emit-slurm job.sh -- "${small[@]}" \
    >log || fail "emit: $(cat log)"
  grep -q '^#SBATCH --array=0-1000$' job.sh && grep -q '1200 runs in 1001 array tasks' log ||
    fail "array: $(grep array job.sh) $(cat log)"
  cp "$spec" 'a,b.mask'
  "$maskc" sweep --grid 'spec=a,b.mask' --out s -- "${rest[@]}" 2>err
  [[ $? -eq 1 ]] && grep -q "write ., for a comma in a file name" err || fail "comma: $(cat err)"
  "$maskc" sweep --grid 'spec=a\,b.mask' --jobs 1 --out s -- "${rest[@]}" >log ||
    fail "spec with a comma: $(cat log)"
  test -f s/spec=a_b.mask/seed0/summary.json || fail "$(ls s)"
  cp s/results.md first.md
  "$maskc" sweep --grid init=vanilla --jobs 1 --out s -- "${small[@]}" >log 2>err
  [[ $? -eq 1 ]] && grep -q 'holds the results of another sweep' err || fail "other grid: $(cat err)"
  cmp first.md s/results.md || fail "the first sweep's table was overwritten"
  test ! -e s/init=vanilla || fail "the other sweep trained"
  "$maskc" launch --nproc 2 -- sweep --grid init=vanilla,mask --out d --dry-run -- "${small[@]}" \
    >log || fail "launch dry run: $(cat log)"
  [[ $(grep -c '^maskc sweep --dry-run:' log) -eq 1 ]] || fail "printed per rank: $(cat log)"
}

# A list of combinations (--point), not a grid: each point one row and one folder, keys free to
# differ between points; a later list into the same folder adds its new points to the tables;
# --point with --grid, a key twice, a point twice and a key also typed after -- are refused.
point_list_is_not_a_grid() {
  "$maskc" sweep --point init=vanilla --point init=mask,lr=0.01 --jobs 1 --out s \
    -- "${small[@]}" >log || fail "list: $(cat log)"
  test -f s/init=vanilla/seed0/summary.json || fail "no vanilla run: $(ls s)"
  test -f s/init=mask,lr=0.01/seed0/summary.json || fail "no mask run: $(ls s)"
  [[ $(table_rows s/results.md | wc -l) -eq 2 ]] || fail "rows: $(cat s/results.md)"
  grep -q 'Combinations: `init=vanilla`; `init=mask,lr=0.01`' s/results.md ||
    fail "heading: $(head -3 s/results.md)"
  "$maskc" sweep --point init=mask-fixed --jobs 1 --out s -- "${small[@]}" >log ||
    fail "second list: $(cat log)"
  [[ $(table_rows s/results.md | wc -l) -eq 3 ]] || fail "union: $(cat s/results.md)"
  "$python" - s/results.json <<'PY' || fail "results.json"
import json, sys
results = json.load(open(sys.argv[1]))
names = [p["name"] for p in results["points"]]
assert names == ["init=vanilla", "init=mask,lr=0.01", "init=mask-fixed"], names
assert results["points"][1]["settings"] == {"init": "mask", "lr": 0.01}, results["points"]
assert {"key": "init", "values": ["vanilla", "mask", "mask-fixed"]} in results["grid"], results
PY
  "$maskc" sweep --grid init=vanilla,mask --jobs 1 --out s -- "${small[@]}" >log 2>err
  [[ $? -eq 1 ]] && grep -q 'holds the results of another sweep' err || fail "grid over list: $(cat err)"
  expect_exit 2 sweep --point init=mask --grid lr=0.1,0.2 --out t -- "${small[@]}" 2>err
  expect_exit 2 sweep --point init=mask,init=vanilla --out t -- "${small[@]}" 2>err
  grep -q "init is given twice" err || fail "key twice: $(cat err)"
  expect_exit 2 sweep --point init=mask --point init=mask --out t -- "${small[@]}" 2>err
  grep -q "init=mask is given twice" err || fail "point twice: $(cat err)"
  expect_exit 2 sweep --point lr=x --out t -- "${small[@]}" 2>err
  grep -q "\-\-point lr: 'x' is not a finite number" err || fail "bad value: $(cat err)"
  expect_exit 2 sweep --point init=mask --out t -- "${small[@]}" --init vanilla 2>err
  grep -q "also given after --" err || fail "typed twice: $(cat err)"
  expect_exit 2 sweep --out t -- "${small[@]}" 2>err
  grep -q -- "--point" err || fail "neither: $(cat err)"
  test ! -e t || fail "a refused sweep wrote t"
}

# A kept cell grows by seeds on a fresh machine: scripts/unpack_runs.sh writes the archive's runs
# back as folders, the sweep counts them as finished and trains only the missing seed, and
# keep_runs.sh then holds both. An archive path that climbs out of the folder is refused.
kept_cell_grows_by_seeds() {
  "$maskc" sweep --grid init=vanilla,mask --seeds 1 --out first -- "${small[@]}" >log ||
    fail "first sweep: $(cat log)"
  bash "$source_dir/scripts/keep_runs.sh" first kept >log || fail "keep_runs: $(cat log)"
  bash "$source_dir/scripts/unpack_runs.sh" kept fresh >log || fail "unpack: $(cat log)"
  grep -q "unpack_runs: 2 runs" log || fail "unpack count: $(cat log)"
  cmp first/init=mask/seed0/summary.json fresh/init=mask/seed0/summary.json || fail "summary"
  test ! -e fresh/init=mask/seed0/checkpoint.json || fail "weights unpacked"
  "$maskc" sweep --grid init=vanilla,mask --seeds 2 --out fresh -- "${small[@]}" >log 2>&1 ||
    fail "second sweep: $(cat log)"
  # The unpacked seed was reused, not trained again: still no checkpoint or weights beside it.
  for init in vanilla mask; do
    test -z "$(ls fresh/init=$init/seed0 | grep -v -e '\.json$' -e '\.jsonl$' -e '\.csv$' \
      -e '\.mask$')" || fail "seed0 of $init was trained again: $(ls fresh/init=$init/seed0)"
    test -f "fresh/init=$init/seed1/checkpoint.json" || fail "seed1 of $init not trained"
  done
  cmp first/init=mask/seed0/summary.json fresh/init=mask/seed0/summary.json || fail "rewritten"
  bash "$source_dir/scripts/unpack_runs.sh" kept fresh >log || fail "second unpack: $(cat log)"
  grep -q "0 runs .*(2 already there)" log || fail "second unpack: $(cat log)"
  bash "$source_dir/scripts/keep_runs.sh" fresh kept >log || fail "keep again: $(cat log)"
  grep -q "(4 runs," log || fail "archive: $(cat log)"
  # The sweep's results.json is kept beside the archive, so the report of the archive names the grid.
  cmp fresh/results.json kept/results.json || fail "results.json not kept"
  "$maskc" report kept >log 2>&1 || fail "report of the archive: $(cat log)"
  grep -q 'A `maskc sweep` over `init` (vanilla, mask)\. 4 finished runs' kept/REPORT.md ||
    fail "report's sweep line: $(head -3 kept/REPORT.md)"
  # A positive-control criterion out of range is a usage error that leaves REPORT.md as it was.
  cp kept/REPORT.md report.before
  for flag in "--control-points nan" "--control-points 0" "--control-points 101" \
    "--control-seeds 0" "--control-seeds two"; do
    expect_exit 2 report kept $flag 2>/dev/null
  done
  cmp report.before kept/REPORT.md || fail "a refused --control flag rewrote REPORT.md"
  cp -r fresh damaged && echo '{"grid": [' >damaged/results.json
  bash "$source_dir/scripts/keep_runs.sh" damaged kept2 >log 2>&1
  [[ $? -eq 1 ]] && grep -q "damaged/results.json: .*nothing written" log ||
    fail "damaged results.json: $(cat log)"
  test -z "$(ls kept2)" || fail "a damaged results.json wrote $(ls kept2)"
  mkdir hostile
  "$python" - <<'PY'
import gzip, json
run = {"path": "runs/../../escape", "files": {"summary.json": "{}"}}
with gzip.open("hostile/runs.jsonl.gz", "wt") as f:
    f.write(json.dumps(run) + "\n")
PY
  bash "$source_dir/scripts/unpack_runs.sh" hostile out >log 2>&1
  [[ $? -ne 0 ]] && grep -q "line 1: not a kept run" log || fail "hostile path: $(cat log)"
  test ! -e escape && test ! -e ../escape || fail "wrote outside the folder"
  # A damaged archive is an error naming it; unpack writes nothing and keep_runs leaves it as is.
  head -c 200 kept/runs.jsonl.gz >hostile/runs.jsonl.gz
  bash "$source_dir/scripts/unpack_runs.sh" hostile out >log 2>&1
  [[ $? -eq 1 ]] && grep -q "hostile/runs.jsonl.gz: not a readable archive" log ||
    fail "truncated archive: $(cat log)"
  test ! -e out || fail "a truncated archive wrote $(ls -R out)"
  cp hostile/runs.jsonl.gz truncated
  bash "$source_dir/scripts/keep_runs.sh" fresh hostile >log 2>&1
  [[ $? -eq 1 ]] && grep -q "not a readable archive" log || fail "keep onto damage: $(cat log)"
  cmp truncated hostile/runs.jsonl.gz || fail "keep_runs replaced a damaged archive"
}

# A parallel sweep says how many of its runs have finished and how far each running one has got
# (--status-every SECONDS: its step of the run's total, loss, time so far and the time left at its
# pace, from its step log and config), and nothing of the kind with 0. Runs of about 6 s.
status_lines_while_runs_train() {
  local longer=(--task parity2 --spec "$spec" --n 10 --dim 16 --depth 1 --heads 1 --head-dim 8
    --mlp 16 --epochs 60 --batch-size 8 --threads 1 --device cpu -q)
  "$maskc" sweep --grid init=vanilla,mask --jobs 2 --status-every 1 --out s -- "${longer[@]}" \
    >log || fail "sweep: $(cat log)"
  local line='^running init=(vanilla|mask) seed 0: step [0-9]+ of 5760, loss [0-9.e+-]+, '
  grep -Eq "$line"'[0-9]+ s, about [0-9]+ s left$' log ||
    fail "no status line: $(cat log)"
  grep -Eq '^status: [01] of 2 runs finished, [12] running$' log || fail "no count: $(cat log)"
  "$maskc" sweep --grid init=vanilla,mask --jobs 2 --status-every 0 --out s0 -- "${longer[@]}" \
    >log || fail "sweep: $(cat log)"
  ! grep -q '^running ' log || fail "status lines with --status-every 0: $(cat log)"
  "$maskc" sweep --grid init=vanilla --status-every -1 --out s1 -- "${small[@]}" >log 2>&1
  [[ $? -eq 2 ]] && grep -q -- "--status-every" log || fail "negative interval: $(cat log)"
}

"$case_name"
