#!/usr/bin/env bash
# The study "Beyond the trained size" (docs/RESULTS.md): addition trained on operands of 1..10
# digits (answer least significant digit first), tested at 11, 20, 50, 100, 200, 500 and 1,000
# digits, 100 problems per size, 3 seeds per cell, each run on one core. Vanilla under each
# position setting against priors that say different things (specs/arith/addition*.mask), fixed,
# learnable and tied to the spec's rules, near-hard (close -30) and with the close value growing
# with the length (*_scaled.mask); then reversal from data files of several lengths
# (examples/reversal) and parity with its running parity written out (examples/parity), the same
# comparison at smaller cost. Runs go to
# runs/length/<cell>/<settings>/seedK (resumable: rerunning continues), then are kept as one
# archive per cell under docs/results/length/<cell>.
#   bash scripts/length_study.sh            # every cell, two runs at a time
#   bash scripts/length_study.sh local      # cells whose name contains "local"
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/study_cell.sh
maskc=${MASKC:-build/bin/maskc}
out=${OUT:-runs/length}
keep=${KEEP:-docs/results/length}
filter=${1:-}
common=(--task addition --digits 1..10 --test-digits 11,20,50,100,200,500,1000 --test-size 100
  --steps "${STEPS:-6000}" --eval-every "${STEPS:-6000}" --preset quick)
sweep_cell() {  # FLAGS_ARRAY NAME GRID... -- TRAIN_FLAGS...: one cell, kept as one archive
  local -n flags=$1
  local name=$2
  shift 2
  [[ -z $filter || $name == *"$filter"* ]] || return 0
  local grid=()
  while [[ $1 != -- ]]; do
    grid+=(--grid "$1")
    shift
  done
  shift
  echo "== $name: ${grid[*]} $*"
  kept_sweep "$name" "${grid[@]}" --seeds 3 -j "${JOBS:-2}" -- "${flags[@]}" "$@"
}
cell() { sweep_cell common "$@"; }
cell local init=mask-fixed,mask -- --spec specs/arith/addition_local.mask --mask-param rules \
  --pos-embedding none
cell near-hard spec=specs/arith/addition_local.mask,specs/arith/addition.mask -- \
  --init mask-fixed --mask-close -30 --pos-embedding none
cell near-hard-rules init=mask -- --spec specs/arith/addition_local.mask --mask-param rules \
  --mask-close -30 --pos-embedding none
cell local-scaled init=mask-fixed,mask -- --spec specs/arith/addition_local_scaled.mask \
  --mask-param rules --pos-embedding none
# The same prior with 20 times the data (20,000 problems per length, 6,000 steps: each problem
# is seen about twice instead of about 40 times), and with that data for 20,000 steps.
cell local-scaled-data init=mask-fixed,mask -- --spec specs/arith/addition_local_scaled.mask \
  --mask-param rules --pos-embedding none --train-size 20000
cell vanilla pos_embedding=none,sinusoidal,rope,alibi -- --init vanilla
# A prior that says the wrong thing: recency (addition_distance.mask), a control.
cell distance init=mask-fixed,mask -- --spec specs/arith/addition_distance.mask \
  --mask-param rules --pos-embedding none
# Reversal from data files of several lengths (examples/reversal): trained on 1..8 digits,
# tested at 8, 16, 32, 64 and 128, 100 lines each; 1,500 steps.
reversal=(--data examples/reversal/train.txt --test-data examples/reversal/test.txt --predict y
  --steps 1500 --eval-every 1500 --preset quick)
prior=(--spec examples/reversal/reversal.mask)
data_cell() { sweep_cell reversal "$@"; }
data_cell reversal-vanilla pos_embedding=none,sinusoidal,rope,alibi -- "${prior[@]}" --init vanilla
data_cell reversal-mask init=mask-fixed,mask -- "${prior[@]}" --mask-param rules \
  --pos-embedding none
data_cell reversal-near-hard init=mask-fixed,mask -- "${prior[@]}" --mask-param rules \
  --mask-close -30 --pos-embedding none
data_cell reversal-scaled init=mask-fixed,mask -- --spec examples/reversal/reversal_scaled.mask \
  --mask-param rules --pos-embedding none
# The near-hard local prior trained longer (20,000 steps: about 4 minutes of training on one core).
long=(--task addition --digits 1..10 --test-digits 11,20,50,100,200,500,1000 --test-size 100
  --steps 20000 --eval-every 20000 --preset quick)
sweep_cell long near-hard-long init=mask-fixed -- --spec specs/arith/addition_local.mask \
  --mask-close -30 --pos-embedding none
sweep_cell long local-scaled-long init=mask-fixed,mask -- \
  --spec specs/arith/addition_local_scaled.mask --mask-param rules --pos-embedding none \
  --train-size 20000
cell align init=mask-fixed,mask -- --spec specs/arith/addition.mask --mask-param rules \
  --pos-embedding none
cell align-scaled init=mask-fixed -- --spec specs/arith/addition_scaled.mask --pos-embedding none
# Parity of n bits with the running parity written out (examples/parity: y[i] = x[0] xor ... xor
# x[i]), from data files of several lengths: trained on 1..8 bits, tested at 8, 16, 32, 64 and 128.
parity=(--data examples/parity/train.txt --test-data examples/parity/test.txt --predict y
  --steps 1500 --eval-every 1500 --preset quick)
parity_cell() { sweep_cell parity "$@"; }
parity_cell parity-vanilla pos_embedding=none,sinusoidal,rope,alibi -- \
  --spec examples/parity/parity.mask --init vanilla
parity_cell parity-mask init=mask-fixed,mask -- --spec examples/parity/parity.mask \
  --mask-param rules --pos-embedding none
parity_cell parity-near-hard init=mask-fixed,mask -- --spec examples/parity/parity.mask \
  --mask-param rules --mask-close -30 --pos-embedding none
parity_cell parity-scaled init=mask-fixed,mask -- --spec examples/parity/parity_scaled.mask \
  --mask-param rules --pos-embedding none
