#!/usr/bin/env bash
# The study "Does placement matter where the prior matters?" (docs/RESULTS.md): addition at 0.1% of
# the problems (1,000), paper preset, bf16, 3 seeds per cell, each run on one core. The same prior
# (specs/arith/addition.mask) as a learnable mask, a fixed one, a zero-started one, and put into
# the query/key weights instead (qk-svd at its default logit contrast 10 and at the mask's 5,
# qk-opt with the paper's fitting settings); a steps control (0.1% of the data with the step count
# of 0.4%, 800 steps); and the QK-normalisation test (--qk-norm layer) here and at parity2's quick
# preset. Runs go to runs/placement/<cell>/<settings>/seedK (resumable: rerunning continues), then
# are kept as one archive per cell under docs/results/placement/<cell>.
#   bash scripts/placement_study.sh                  # every cell
#   bash scripts/placement_study.sh inits qk-opt     # the cells named
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/study_cell.sh
maskc=${MASKC:-build/bin/maskc}
out=${OUT:-runs/placement}
keep=${KEEP:-docs/results/placement}
cells=" $* "
addition=(--task addition --preset paper --train-fraction 0.001 --spec specs/arith/addition.mask
  --precision bf16 --eval-every 40 --device cpu)
parity2=(--task parity2 --preset quick --spec specs/gotu/parity2.mask --device cpu)
qk_opt_paper=(--qk-opt-lr 1e-4 --qk-opt-steps 10000)
sweep_cell() {  # FLAGS_ARRAY NAME GRID... -- TRAIN_FLAGS...: one cell, kept as one archive
  local -n flags=$1
  local name=$2
  shift 2
  [[ $cells == "  " || $cells == *" $name "* ]] || return 0
  local grid=()
  while [[ $1 != -- ]]; do
    grid+=(--grid "$1")
    shift
  done
  shift
  echo "== $name: ${grid[*]} $*"
  kept_sweep "$name" "${grid[@]}" --seeds 3 -j "${JOBS:-1}" --threads 1 -- "${flags[@]}" "$@"
}
cell() { sweep_cell addition "$@"; }
cell inits init=vanilla,mask,mask-fixed,mask-zero,qk-svd --
# qk-svd with its open/closed logit gap matched to the mask's: log σ(5) − log σ(−5) ≈ 5.0.
cell qk-svd-contrast5 init=qk-svd -- --qk-contrast 5
cell qk-norm init=vanilla,mask,qk-svd -- --qk-norm layer
sweep_cell parity2 parity2-qk-norm init=vanilla,mask,qk-svd,qk-opt qk_norm=none,layer --
cell qk-opt init=qk-opt -- "${qk_opt_paper[@]}"
cell steps-control init=vanilla,mask -- --steps 800
cell qk-opt-qk-norm init=qk-opt -- "${qk_opt_paper[@]}" --qk-norm layer
# A wrong or incomplete prior where the outcome can move: addition.mask shifted one place
# (addition_lag1.mask: each answer row reads the place below its own) and without the carries
# (addition_nocarry.mask), each learnable and fixed.
wrong=(--task addition --preset paper --train-fraction 0.001 --precision bf16 --eval-every 40
  --device cpu)
sweep_cell wrong wrong-prior spec=specs/arith/addition_lag1.mask,specs/arith/addition_nocarry.mask \
  init=mask,mask-fixed --
