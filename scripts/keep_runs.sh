#!/usr/bin/env bash
# Copies the small files of every run under a results folder into the repository, so a reported
# number can be checked: config.json, summary.json, metrics.jsonl and steps.csv of each run, and
# the folder's results.md/results.json. Weights, checkpoints and masks stay behind.
#   bash scripts/keep_runs.sh runs/study/addition-bf16 docs/results/study/addition-bf16
set -euo pipefail
if [[ $# -ne 2 || ! -d $1 ]]; then
  echo "usage: scripts/keep_runs.sh RESULTS_FOLDER DEST   (RESULTS_FOLDER: a reproduce/sweep --out)" >&2
  exit 2
fi
src=${1%/}
dest=${2%/}
found=0
while IFS= read -r -d '' summary; do
  run=$(dirname "$summary")
  to="$dest/runs/${run#"$src"/}"
  mkdir -p "$to"
  for f in config.json summary.json metrics.jsonl steps.csv; do
    if [[ -f $run/$f ]]; then cp "$run/$f" "$to/"; fi
  done
  found=$((found + 1))
done < <(find "$src" -name summary.json -print0 | sort -z)
for f in results.md results.json; do
  if [[ -f $src/$f ]]; then cp "$src/$f" "$dest/"; fi
done
if ((found == 0)); then
  echo "keep_runs: no finished run (summary.json) under $src" >&2
  exit 1
fi
echo "keep_runs: $found runs of $src -> $dest/runs"
