#!/usr/bin/env bash
# `maskc diff` and `maskc distill` end to end (tests/cmake/runtime.cmake registers each case).
# Usage: distill_cli.sh MASKC SOURCE_DIR CASE PYTHON
set -u  # no pipefail: a case greps what a failing maskc prints
maskc=$1
source_dir=$2
case_name=$3
python=$4
specs=$source_dir/specs
tiny=(--dim 16 --depth 2 --heads 2 --head-dim 8 --mlp 16 --threads 1 --device cpu -q)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# A spec against itself: nothing differs, Jaccard 1; against the no-carry design: only A has the
# carry cells, the grids mark them `a`, and --png draws the difference.
diff_counts_cells() {
  local addition=$specs/arith/addition.mask
  "$maskc" diff "$addition" "$addition" >"$d/same" || fail "diff with itself"
  grep -Eq '^ +0 +0 +0 +0 +[0-9]+ +1\.000$' "$d/same" || fail "self diff: $(cat "$d/same")"
  "$maskc" diff "$addition" "$specs/arith/addition_nocarry.mask" --png "$d/diff.png" >"$d/out" ||
    fail "diff"
  grep -Eq '^ +0 +0 +[1-9][0-9]* +0 +[0-9]+ +0\.[0-9]{3}$' "$d/out" || fail "counts: $(cat "$d/out")"
  grep -q ' a ' "$d/out" || fail "no cell marked only in A: $(cat "$d/out")"
  test -s "$d/diff.png" || fail "no PNG"
  # --layer and --head choose what --png draws; without it they are refused, not ignored.
  "$maskc" diff "$addition" "$addition" --layer 5 >/dev/null 2>"$d/err"
  [[ $? -eq 2 ]] && grep -q -- "--layer requires --png" "$d/err" || fail "--layer: $(cat "$d/err")"
  "$maskc" diff "$addition" "$specs/gotu/parity2.mask" >"$d/out" 2>"$d/err"
  [[ $? -eq 1 ]] && grep -q "cannot compare mask 'addition'" "$d/err" || fail "$(cat "$d/err")"
}

# A run whose hand-written mask barely moved: --from mask gives back the spec's pattern exactly
# (maskc diff: nothing only in A or only in B), in every layer and head.
distill_mask_gives_back_the_spec() {
  "$maskc" compile "$specs/gotu/parity2.mask" -D n=6 -o "$d/parity2.safetensors" >/dev/null ||
    fail "compile"
  "$maskc" train --task parity2 --n 6 --spec "$specs/gotu/parity2.mask" --init mask --epochs 1 \
    --batch-size 16 "${tiny[@]}" --out "$d/run" || fail "train"
  "$maskc" distill "$d/run" --from mask -o "$d/new/folder/back.mask" >"$d/out" 2>"$d/err" ||
    fail "distill into folders it makes: $(cat "$d/err")"
  cp "$d/new/folder/back.mask" "$d/back.mask"
  ! grep -q "warning" "$d/err" || fail "a prior that closes cells is not 'no prior': $(cat "$d/err")"
  grep -q "^# distilled by \`maskc distill" "$d/back.mask" || fail "header: $(cat "$d/back.mask")"
  "$maskc" diff "$d/back.mask" "$d/parity2.safetensors" >"$d/diff" || fail "diff"
  [[ $(grep -Ec '^ +[0-9]+ +[0-9]+ +0 +0 +[0-9]+ +1\.000$' "$d/diff") -ge 1 ]] &&
    ! grep -Eq '^ +[0-9]+ +[0-9]+ +([1-9]|0 +[1-9])' "$d/diff" || fail "differs: $(cat "$d/diff")"
}

# --from attention on a run of each family writes a spec that compiles, with the mass each
# layer's pattern holds (≥ --mass) in its header; --per model writes one plane.
distill_attention_every_family() {
  printf '1 2 = 2 1\n3 4 = 4 3\n5 6 = 6 5\n7 8 = 8 7\n9 0 = 0 9\n1 3 = 3 1\n2 4 = 4 2\n' >"$d/rev.txt"
  printf 'mask rev\ntokens a[2], eq, c[2]\nhard causal\nopen diagonal\n' >"$d/rev.mask"
  printf 'x0,x1,x2,y\n' >"$d/t.csv"
  for bits in 0,0,0 0,0,1 0,1,0 0,1,1 1,0,0 1,0,1 1,1,0 1,1,1; do
    IFS=, read -r a b c <<<"$bits"
    echo "$a,$b,$c,$((a ^ b))" >>"$d/t.csv"
  done
  printf 'mask t\ntokens cls, x[3]\nopen diagonal\n' >"$d/t.mask"
  local runs=(
    "gotu:--task parity2 --n 6 --epochs 1 --batch-size 16"
    "arith:--task addition --spec $specs/arith/addition.mask --init mask --train-fraction 0.0002 --test-size 32 --steps 2 --batch-size 32"
    "data:--data $d/rev.txt --spec $d/rev.mask --predict c --epochs 2 --batch-size 4"
    "table:--truth-table $d/t.csv --spec $d/t.mask --epochs 2 --batch-size 4"
    "vision:--task fashion-mnist --steps 2 --batch-size 16"
    "language:--task fortunes-char --steps 2 --batch-size 16"
  )
  for entry in "${runs[@]}"; do
    local name=${entry%%:*} flags=${entry#*:}
    # shellcheck disable=SC2086  # the flags split into words
    "$maskc" train $flags "${tiny[@]}" --out "$d/$name" 2>"$d/err" || fail "$name: $(cat "$d/err")"
    "$maskc" distill "$d/$name" --rows 16 -o "$d/$name.mask" >"$d/out" 2>"$d/err" ||
      fail "distill $name: $(cat "$d/err")"
    "$maskc" compile "$d/$name.mask" -o "$d/$name.safetensors" >/dev/null || fail "compile $name"
    # A causal decoder's last row predicts no token: its mass is of the other rows.
    local rows=''
    [[ $name == arith || $name == data || $name == language ]] && rows=' of the rows that predict a token'
    grep -Eq "^# layer 1: the pattern holds (0\.9[0-9]{2}|1\.000) of the attention$rows\$" "$d/$name.mask" ||
      fail "$name mass: $(cat "$d/$name.mask")"
    "$maskc" distill "$d/$name" --rows 16 --per model -o "$d/$name-model.mask" >/dev/null ||
      fail "--per model $name"
    ! grep -q "^layer\|^heads\|^layers" "$d/$name-model.mask" || fail "$(cat "$d/$name-model.mask")"
  done
  grep -q "^hard causal$" "$d/arith.mask" || fail "arith hard: $(cat "$d/arith.mask")"
  grep -q "^digits c lsb_first$" "$d/arith.mask" || fail "arith digits"
  # A run without a spec: the digit orders of its data (here the operands least significant first).
  "$maskc" train --task addition --train-fraction 0.0002 --test-size 32 --steps 2 --batch-size 32 \
    --operand-order lsb "${tiny[@]}" --out "$d/plain" 2>"$d/err" || fail "plain: $(cat "$d/err")"
  "$maskc" distill "$d/plain" --rows 16 -o "$d/plain.mask" >/dev/null || fail "distill plain"
  grep -q "^digits a lsb_first$" "$d/plain.mask" && grep -q "^digits c lsb_first$" "$d/plain.mask" ||
    fail "plain digits: $(cat "$d/plain.mask")"
  "$maskc" compile "$d/plain.mask" -o "$d/plain.safetensors" >/dev/null || fail "compile plain"
  # Keeping all of every row's attention opens every cell: said on stderr and in the header, and
  # the spec is `default open` with the run's hard mask alone.
  "$maskc" distill "$d/arith" --rows 16 --per model --mass 1 -o "$d/all.mask" >/dev/null \
    2>"$d/err" || fail "distill --mass 1: $(cat "$d/err")"
  grep -q "^maskc: warning: the distilled pattern opens every cell" "$d/err" || fail "$(cat "$d/err")"
  grep -q "^# the distilled pattern opens every cell, so the spec is no prior" "$d/all.mask" &&
    grep -q "^default open$" "$d/all.mask" && grep -q "^hard causal$" "$d/all.mask" &&
    ! grep -q "^open " "$d/all.mask" || fail "all open: $(cat "$d/all.mask")"
}

# A run trained on a data file named relative to its folder is distilled from any other folder:
# config.json's resolved.data_files holds the file's absolute path and SHA-256. A moved file
# and a changed one are clear errors naming where the run read it.
distill_from_any_folder() {
  mkdir -p "$d/work" "$d/elsewhere"
  printf '1 2 = 2 1\n3 4 = 4 3\n5 6 = 6 5\n7 8 = 8 7\n9 0 = 0 9\n1 3 = 3 1\n' >"$d/work/rev.txt"
  printf 'mask rev\ntokens a[2], eq, c[2]\nhard causal\nopen diagonal\n' >"$d/work/rev.mask"
  (cd "$d/work" && "$maskc" train --data rev.txt --spec rev.mask --predict c --epochs 1 \
    --batch-size 4 "${tiny[@]}" --out run) || fail "train"
  grep -q '"sha256"' "$d/work/run/config.json" || fail "no data_files: $(cat "$d/work/run/config.json")"
  (cd "$d/elsewhere" && "$maskc" distill "$d/work/run" -o out.mask >/dev/null 2>"$d/err") ||
    fail "distill from another folder: $(cat "$d/err")"
  test -s "$d/elsewhere/out.mask" || fail "no spec written"
  mv "$d/work/rev.txt" "$d/work/moved.txt"
  (cd "$d/elsewhere" && "$maskc" distill "$d/work/run" -o moved.mask >/dev/null 2>"$d/err")
  [[ $? -eq 1 ]] && grep -q "where the run read it" "$d/err" && ! test -e "$d/elsewhere/moved.mask" ||
    fail "moved: $(cat "$d/err")"
  printf '1 2 = 2 1\n' >"$d/work/rev.txt"
  (cd "$d/elsewhere" && "$maskc" distill "$d/work/run" -o changed.mask >/dev/null 2>"$d/err")
  [[ $? -eq 1 ]] && grep -q "has changed since the run read it" "$d/err" || fail "changed: $(cat "$d/err")"
}

# Bad run folders: not a run, unfinished, another version's config, no mask for --from mask, a
# bad flag. Each is a clear error, exit 1 (2 for usage), and writes nothing.
distill_refuses_bad_runs() {
  mkdir "$d/empty"
  "$maskc" distill "$d/empty" -o "$d/x.mask" 2>"$d/err"
  [[ $? -eq 1 ]] && grep -q "is not a run folder (no config.json)" "$d/err" || fail "$(cat "$d/err")"
  "$maskc" train --task parity2 --n 6 --epochs 1000 --batch-size 16 --stop-after 2 "${tiny[@]}" \
    --out "$d/stopped" 2>/dev/null
  "$maskc" distill "$d/stopped" -o "$d/x.mask" 2>"$d/err"
  [[ $? -eq 1 ]] && grep -q "holds an unfinished run (no summary.json)" "$d/err" || fail "$(cat "$d/err")"
  "$maskc" train --task parity2 --n 6 --epochs 1 --batch-size 16 "${tiny[@]}" --out "$d/vanilla" ||
    fail "train"
  "$maskc" distill "$d/vanilla" --from mask -o "$d/x.mask" 2>"$d/err"
  [[ $? -eq 1 ]] && grep -q "has no mask.safetensors" "$d/err" || fail "$(cat "$d/err")"
  sed -i 's/"init"/"init_method_of_another_version"/' "$d/vanilla/config.json"
  "$maskc" distill "$d/vanilla" -o "$d/x.mask" 2>"$d/err"
  [[ $? -eq 1 ]] && grep -q "another maskc version" "$d/err" || fail "$(cat "$d/err")"
  expect_exit 2 distill "$d/vanilla" --mass 1.5 -o "$d/x.mask" 2>/dev/null
  test ! -e "$d/x.mask" || fail "a refused distill wrote its output"
}

# Sets every float32 tensor of the safetensors file $1 to NaN.
nan_tensors() {
  "$python" - "$1" <<'PY'
import json, struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
size = struct.unpack("<Q", data[:8])[0]
for name, t in json.loads(data[8:8 + size]).items():
    if name != "__metadata__" and t["dtype"] == "F32":
        begin, end = (8 + size + o for o in t["data_offsets"])
        data[begin:end] = struct.pack("<f", float("nan")) * ((end - begin) // 4)
open(sys.argv[1], "wb").write(data)
PY
}

# A learned M or weights that are not finite (a diverged run) are refused, not written as a spec
# of closed or open cells, and `maskc diff` does not count NaN cells as closed; a config.json that
# describes a far larger model than its weights hold is refused before the model is built.
distill_refuses_non_finite_runs() {
  "$maskc" train --task parity2 --n 6 --spec "$specs/gotu/parity2.mask" --init mask --epochs 1 \
    --batch-size 16 "${tiny[@]}" --out "$d/run" || fail "train"
  cp -r "$d/run" "$d/nan-mask"
  nan_tensors "$d/nan-mask/mask.safetensors"
  "$maskc" distill "$d/nan-mask" --from mask -o "$d/x.mask" 2>"$d/err"
  [[ $? -eq 1 ]] && grep -q "mask.safetensors: the cell of layer 0, head 0, query cls, key cls is nan" \
    "$d/err" || fail "NaN M: $(cat "$d/err")"
  "$maskc" diff "$d/nan-mask/mask.safetensors" "$d/run/mask.safetensors" >"$d/out" 2>"$d/err"
  [[ $? -eq 1 ]] && grep -q "is nan" "$d/err" || fail "diff of NaN cells: $(cat "$d/out" "$d/err")"
  cp -r "$d/run" "$d/nan-weights"
  nan_tensors "$d/nan-weights/weights.safetensors"
  "$maskc" distill "$d/nan-weights" --from attention -o "$d/x.mask" 2>"$d/err"
  [[ $? -eq 1 ]] && grep -q "weights.safetensors: the model's attention is nan" "$d/err" ||
    fail "NaN weights: $(cat "$d/err")"
  cp -r "$d/run" "$d/deep"
  "$python" - "$d/deep/config.json" <<'PY' || fail "edit"
import json, sys
config = json.load(open(sys.argv[1]))
config["depth"] = 100000000
json.dump(config, open(sys.argv[1], "w"))
PY
  "$maskc" distill "$d/deep" -o "$d/x.mask" 2>"$d/err"
  [[ $? -eq 1 ]] && grep -q "depth 100000000.*they are not of one model" "$d/err" ||
    fail "depth 1e8: $(cat "$d/err")"
  test ! -e "$d/x.mask" || fail "a refused distill wrote its output"
}

# `maskc reproduce distill`: --only a distilled row trains its source row first (on every point
# of the cube), distils it, trains on the distilled spec (the run's copy is that file), and holds
# it against the hand-written spec as `maskc diff` does. Run again, nothing is redone.
reproduce_distill_suite() {
  local s=$d/suite
  "$maskc" reproduce distill --only parity2-distilled --seeds 1 --epochs 1 --jobs 2 --threads 1 \
    --out "$s" >"$d/log" 2>&1 || fail "reproduce: $(cat "$d/log")"
  local spec=$s/distilled/parity2-all-vanilla-seed0-attention-model-0.9.mask
  grep -q '"train_domain": "all"' "$s/parity2-all-vanilla/seed0/config.json" || fail "source domain"
  ! grep -q '"train_domain": "all"' "$s/parity2-distilled/seed0/config.json" || fail "target domain"
  test -f "$s/parity2-distilled/seed0/summary.json" || fail "no target run"
  cmp "$spec" "$s/parity2-distilled/seed0/spec.mask" || fail "the run did not train on the distilled spec"
  grep -q "^# distilled by \`maskc distill $s/parity2-all-vanilla/seed0 --from attention" "$spec" ||
    fail "header: $(head -3 "$spec")"
  # The started lines: the source before the distilled row.
  [[ $(grep "^started" "$d/log" | head -1) == *parity2-all-vanilla* ]] || fail "$(cat "$d/log")"
  grep -q "^## Distilled priors against the hand-written spec" "$s/results.md" || fail "no table"
  "$maskc" diff "$spec" "$specs/gotu/parity2.mask" >"$d/diff" || fail "diff"
  local jaccard
  jaccard=$(awk '$1 ~ /^[0-9]+$/ && NF == 6 {print $NF}' "$d/diff" | head -1)
  [[ -n $jaccard ]] || fail "diff: $(cat "$d/diff")"
  grep -Eq "^\| parity2-distilled \| 0 \| parity2-all-vanilla \| [0-9]+ \| [0-9]+ \| [0-9]+ \| $jaccard \|$" \
    "$s/results.md" || fail "Jaccard $jaccard: $(cat "$s/results.md")"
  tr -d ' \n' <"$s/results.json" |
    grep -q '"distilled":\[{"both":[0-9]*,"from":"parity2-all-vanilla","jaccard":[0-9.e-]*,' ||
    fail "results.json: $(cat "$s/results.json")"
  local before
  before=$(stat -c %Y "$spec")
  sleep 1
  "$maskc" reproduce distill --only parity2-distilled --seeds 1 --epochs 1 --jobs 2 --threads 1 \
    --out "$s" >"$d/again" 2>&1 || fail "again: $(cat "$d/again")"
  ! grep -q "^started" "$d/again" || fail "redone: $(cat "$d/again")"
  [[ $(stat -c %Y "$spec") == "$before" ]] || fail "distilled again"
}

"$case_name"
