#!/usr/bin/env bash
# Copies the small files of every run under a results folder into the repository, so a reported
# number can be checked: config.json, summary.json, metrics.jsonl, steps.csv and spec.mask (the
# spec the run trained on; `maskc report` pools runs on distilled specs by its header) of each run,
# the folder's results.md/results.json, and the specs `maskc reproduce distill` distilled
# (distilled/). Weights, checkpoints and masks stay behind.
#   bash scripts/keep_runs.sh RESULTS_FOLDER DEST
#   bash scripts/keep_runs.sh runs/study/addition-bf16 docs/results/study/addition-bf16
# A Boolean task with n inputs records 2^n Fourier coefficients per evaluation (n = 15: 8 MB of
# metrics.jsonl a run). The kept copies hold the FOURIER_KEEP (default 64) largest in magnitude of
# each record's "fourier" object, and say so in "fourier_kept": {"kept": K, "of": N}; everything
# else is copied byte for byte.
set -euo pipefail
if [[ $# -ne 2 || ! -d $1 ]]; then
  echo "usage: scripts/keep_runs.sh RESULTS_FOLDER DEST   (RESULTS_FOLDER: a reproduce/sweep --out)" >&2
  exit 2
fi
src=${1%/}
dest=${2%/}
keep=${FOURIER_KEEP:-64}
python=/usr/bin/python3

# Copies JSON or JSON-lines file $1 to $2, trimming oversized "fourier" objects.
copy_json() {
  if ! grep -q '"fourier"' "$1"; then
    cp "$1" "$2"
    return
  fi
  "$python" - "$1" "$2" "$keep" <<'PY'
import json, sys
src, dst, keep = sys.argv[1], sys.argv[2], int(sys.argv[3])
trimmed = False
def trim(record):
    global trimmed
    f = record.get("fourier")
    if isinstance(f, dict) and len(f) > keep:
        trimmed = True
        top = sorted(f, key=lambda k: -abs(f[k]) if isinstance(f[k], (int, float)) else 0)[:keep]
        record["fourier"] = {k: f[k] for k in sorted(top)}
        record["fourier_kept"] = {"kept": keep, "of": len(f)}
    return record
with open(src) as text:
    content = text.read()
with open(dst + ".tmp", "w") as out:
    if src.endswith(".jsonl"):
        for line in content.splitlines():
            out.write(json.dumps(trim(json.loads(line)), separators=(",", ":")) + "\n")
    else:
        json.dump(trim(json.loads(content)), out, indent=2)
        out.write("\n")
import os, shutil
if trimmed:
    os.replace(dst + ".tmp", dst)
else:  # nothing to trim: the file as it was
    os.remove(dst + ".tmp")
    shutil.copyfile(src, dst)
PY
}

found=0
while IFS= read -r -d '' summary; do
  run=$(dirname "$summary")
  to="$dest/runs/${run#"$src"/}"
  mkdir -p "$to"
  for f in config.json steps.csv spec.mask; do
    if [[ -f $run/$f ]]; then cp "$run/$f" "$to/"; fi
  done
  for f in summary.json metrics.jsonl; do
    if [[ -f $run/$f ]]; then copy_json "$run/$f" "$to/$f"; fi
  done
  found=$((found + 1))
done < <(find "$src" -name summary.json -print0 | sort -z)
for f in results.md results.json; do
  if [[ -f $src/$f ]]; then cp "$src/$f" "$dest/"; fi
done
if [[ -d $src/distilled ]]; then
  mkdir -p "$dest/distilled"
  cp "$src"/distilled/*.mask "$dest/distilled/"
fi
if ((found == 0)); then
  echo "keep_runs: no finished run (summary.json) under $src" >&2
  exit 1
fi
echo "keep_runs: $found runs of $src -> $dest/runs"
