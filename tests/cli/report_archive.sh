#!/usr/bin/env bash
# `maskc report` on an archive of runs (runs.jsonl.gz, runfolder/archive.h) writes the same REPORT.md
# and plots as on the run folders it came from: a committed study cell is unpacked into folders by
# an independent reader (Python's gzip and json), reported, archived again by
# scripts/keep_runs.sh (byte for byte the committed archive) and reported from the archive.
# Usage: report_archive.sh MASKC SOURCE_DIR PYTHON
set -euo pipefail
maskc=$1
source_dir=$2
python=$3
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cell=$source_dir/docs/results/study/addition-bf16
mkdir -p "$d/folders/cell" "$d/archive"
"$python" - "$cell/runs.jsonl.gz" "$d/folders/cell" <<'PY'
import gzip, json, os, sys
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as archive:
    for line in archive:
        run = json.loads(line)
        folder = os.path.join(sys.argv[2], run["path"])
        os.makedirs(folder)
        for name, text in run["files"].items():
            with open(os.path.join(folder, name), "w", encoding="utf-8", newline="") as f:
                f.write(text)
PY
test "$(find "$d/folders/cell/runs" -name summary.json | wc -l)" -eq 6
bash "$source_dir/scripts/keep_runs.sh" "$d/folders/cell/runs" "$d/archive/cell" >/dev/null
cmp "$cell/runs.jsonl.gz" "$d/archive/cell/runs.jsonl.gz"
"$maskc" report "$d/folders/cell" >/dev/null
"$maskc" report "$d/archive/cell" >/dev/null
diff "$d/folders/cell/REPORT.md" "$d/archive/cell/REPORT.md"
grep -q "| runs/init=mask | 3 |" "$d/archive/cell/REPORT.md"
for plot in "$d"/folders/cell/plots/*.png; do
  cmp "$plot" "$d/archive/cell/plots/$(basename "$plot")"
done
# A damaged archive is an error naming it, and writes no report.
printf 'not gzip' >"$d/archive/cell/runs.jsonl.gz"
rm "$d/archive/cell/REPORT.md"
if "$maskc" report "$d/archive/cell" 2>"$d/err"; then echo "FAIL: a damaged archive was read" >&2; exit 1; fi
grep -q "runs.jsonl.gz" "$d/err" || { cat "$d/err" >&2; exit 1; }
test ! -e "$d/archive/cell/REPORT.md"
echo "report from the archive equals report from the folders"
