#!/usr/bin/env bash
# The Boolean headline at the paper's reference size on 3 seeds (docs/RESULTS.md, "The Boolean
# headline at the paper's reference size"): parity2 and maj3, paper preset (12 layers, dim 256,
# Adam lr 1e-5, 1,920 steps for parity2, 3,840 for maj3), vanilla against the task's shipped spec
# as a learnable mask, bf16, one core per run. Cells: each task at our defaults (parity2, maj3),
# and at the setting the quick study found most favourable to the mask: parity2 with the position
# embedding started at std 0.02 (parity2-std002), maj3 without a position embedding
# (maj3-pos-none). Runs go
# to runs/gotu-headline/<cell>/<settings>/seedK (resumable: run the same command again to
# continue), then are kept as one archive per cell under docs/results/gotu-headline/<cell>; runs
# already kept there are unpacked first (scripts/unpack_runs.sh), so on a fresh clone only the
# missing seeds train.
# Time: an evaluation of the whole cube (2^15 points) takes about 52 s on one core and a parity2
# step about 1.2–1.4 s. parity2 evaluates every epoch (21 evaluations, as the one-seed table it
# extends did): 61–63 min a run, measured on one core of the 2-core AMD EPYC VM beside a second run.
# The other cells evaluate every 5 epochs (--eval-every 480 for parity2's 96-step epochs, 640 for
# maj3's 128-step ones): 40–47 min a parity2 run (measured, parity2-std002 seeds 0–2, beside a
# second run) and 77 min a maj3 run (measured, maj3-pos-none seed 0, likewise). Training is the
# same step for step whatever the evaluation schedule (a test in tests/train_test.cpp checks it);
# only the curves are coarser. The four cells are about 24 core-hours. SEEDS (default 3) and INITS
# (default vanilla,mask) narrow a cell.
#   bash scripts/boolean_headline_study.sh                    # every cell
#   SEEDS=1 bash scripts/boolean_headline_study.sh parity2    # the cells named
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/study_cell.sh
maskc=${MASKC:-build/bin/maskc}
out=${OUT:-runs/gotu-headline}
keep=${KEEP:-docs/results/gotu-headline}
cells=" $* "
cell() {  # NAME TASK TRAIN_FLAGS...: INITS over SEEDS seeds, kept as one archive
  local name=$1 task=$2 seeds=${SEEDS:-3}
  shift 2
  [[ $cells == "  " || $cells == *" $name "* ]] || return 0
  echo "== $name: init=${INITS:-vanilla,mask} $task $* ($seeds seeds)"
  kept_sweep "$name" --grid "init=${INITS:-vanilla,mask}" --seeds "$seeds" -j "${JOBS:-2}" \
    --threads 1 -- --task "$task" --preset paper --spec "specs/gotu/$task.mask" --device cpu \
    --precision bf16 "$@"
}
cell parity2 parity2
cell maj3 maj3 --eval-every 640
cell parity2-std002 parity2 --pos-init-std 0.02 --eval-every 480
cell maj3-pos-none maj3 --pos-embedding none --eval-every 640
