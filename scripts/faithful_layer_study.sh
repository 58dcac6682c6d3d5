#!/usr/bin/env bash
# The "PyTorch defaults" cells of docs/RESULTS.md rerun with the faithful nn.TransformerEncoderLayer
# (docs/settings.md: post-LN, dropout 0.1 on attention, residual and MLP, ReLU, q/k/v biases with
# nn.MultiheadAttention's init, dim_feedforward 2048, no final LayerNorm): addition at the paper's
# 0.4% (4,000 problems), paper preset (800 steps), vanilla against the mask
# (specs/arith/addition.mask), each run on one core. Cells: the position embedding started at std 1
# (std1) and at 0.02 (std002), bf16, each also in fp32 (std1-fp32, std002-fp32), and at 0.02 with a
# linear warm-up of WARMUP steps (std002-warmup, default 80, a tenth of the run; std002-warmup-fp32
# in fp32). The ablation cells (ablate-*) revert one of the four ways the faithful layer differs from
# the emulated one at a time, at std 0.02, bf16, without a warm-up: ablate-mlp256 (MLP 256
# wide, our default, instead of 2048), ablate-final-norm (a final LayerNorm), ablate-mlp-dropout (no
# dropout inside the MLP), ablate-qkv (no q/k/v biases, our default attention init); a cell
# that learns again names the difference that stops training. Runs go to runs/faithful/<cell>/<settings>/seedK (resumable), then are
# kept as one archive per cell under docs/results/faithful/<cell>. One run takes about 23 min on
# one core of a 2-core AMD EPYC (bf16); SEEDS (default 3) and INITS (default vanilla,mask) narrow a
# cell, and a later call with more grows it (finished runs are kept).
#   bash scripts/faithful_layer_study.sh                          # every cell
#   SEEDS=6 bash scripts/faithful_layer_study.sh std002           # the cells named
#   INITS=vanilla SEEDS=2 bash scripts/faithful_layer_study.sh std002-warmup
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/study_cell.sh
maskc=${MASKC:-build/bin/maskc}
out=${OUT:-runs/faithful}
keep=${KEEP:-docs/results/faithful}
cells=" $* "
faithful=(--task addition --preset paper --spec specs/arith/addition.mask --eval-every 80
  --device cpu --norm post --attn-dropout 0.1 --resid-dropout 0.1 --mlp-dropout 0.1
  --activation relu --qkv-bias yes --attn-init torch --final-norm no --mlp 2048)
cell() {  # NAME TRAIN_FLAGS...: INITS over SEEDS seeds, kept as one archive
  local name=$1 seeds=${SEEDS:-3}
  shift
  [[ $cells == "  " || $cells == *" $name "* ]] || return 0
  echo "== $name: init=${INITS:-vanilla,mask} $* ($seeds seeds)"
  kept_sweep "$name" --grid "init=${INITS:-vanilla,mask}" --seeds "$seeds" -j "${JOBS:-2}" \
    --threads 1 -- "${layer[@]}" "$@"
}
layer=("${faithful[@]}")
cell std002 --pos-init-std 0.02 --precision bf16
cell std1 --precision bf16
cell std002-fp32 --pos-init-std 0.02 --precision fp32
cell std002-warmup --pos-init-std 0.02 --precision bf16 --warmup "${WARMUP:-80}"
cell std002-warmup-fp32 --pos-init-std 0.02 --precision fp32 --warmup "${WARMUP:-80}"
cell std1-fp32 --precision fp32
ablate() {  # NAME FLAG VALUE [FLAG VALUE...]: cell NAME at std 0.02, bf16, with those faithful values replaced
  local name=$1 i
  shift
  layer=("${faithful[@]}")
  while (($# >= 2)); do
    for i in "${!layer[@]}"; do [[ ${layer[i]} == "$1" ]] && layer[i + 1]=$2; done
    shift 2
  done
  cell "$name" --pos-init-std 0.02 --precision bf16
}
ablate ablate-mlp256 --mlp 256
ablate ablate-final-norm --final-norm yes
ablate ablate-mlp-dropout --mlp-dropout 0
ablate ablate-qkv --qkv-bias no --attn-init default
