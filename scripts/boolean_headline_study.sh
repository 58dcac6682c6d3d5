#!/usr/bin/env bash
# The Boolean headline at the paper's reference size on 3 seeds (docs/RESULTS.md, "Parity2 at the
# paper's reference size"): parity2 and maj3, paper preset (12 layers, dim 256, Adam lr 1e-5,
# 1,920 steps, the whole cube evaluated every epoch), vanilla against the task's shipped spec as a
# learnable mask, bf16, one core per run. Cells: each task at our defaults (parity2, maj3), and at
# the setting the quick study found most favourable to the mask: parity2 with the position
# embedding started at std 0.02 (parity2-std002), maj3 without a position embedding
# (maj3-pos-none). Runs go to runs/gotu-headline/<cell>/<settings>/seedK (resumable: run the same
# command again to continue), then are kept as one archive per cell under
# docs/results/gotu-headline/<cell>. A run takes about 53 min (parity2, 1,920 steps) or 96 min
# (maj3, 3,840 steps) on one core of a 2-core Xeon (the sweep's --dry-run estimates): the four
# cells are about 30 core-hours. SEEDS (default 3) and INITS (default vanilla,mask) narrow a cell.
#   bash scripts/boolean_headline_study.sh                    # every cell
#   SEEDS=1 bash scripts/boolean_headline_study.sh parity2    # the cells named
set -euo pipefail
cd "$(dirname "$0")/.."
maskc=${MASKC:-build/bin/maskc}
out=${OUT:-runs/gotu-headline}
keep=${KEEP:-docs/results/gotu-headline}
cells=" $* "
cell() {  # NAME TASK TRAIN_FLAGS...: INITS over SEEDS seeds, kept as one archive
  local name=$1 task=$2 seeds=${SEEDS:-3}
  shift 2
  [[ $cells == "  " || $cells == *" $name "* ]] || return 0
  echo "== $name: init=${INITS:-vanilla,mask} $task $* ($seeds seeds)"
  "$maskc" sweep --grid "init=${INITS:-vanilla,mask}" --seeds "$seeds" -j "${JOBS:-2}" --threads 1 \
    --out "$out/$name" -- --task "$task" --preset paper --spec "specs/gotu/$task.mask" \
    --device cpu --precision bf16 "$@"
  bash scripts/keep_runs.sh "$out/$name" "$keep/$name"
}
cell parity2 parity2
cell maj3 maj3
cell parity2-std002 parity2 --pos-init-std 0.02
cell maj3-pos-none maj3 --pos-embedding none
