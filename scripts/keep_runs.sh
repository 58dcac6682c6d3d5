#!/usr/bin/env bash
# Keeps the runs under a results folder in the repository as one archive, so a reported number
# can be checked: DEST/runs.jsonl.gz (runfolder/archive.h: one JSON line per run, its path and the
# exact text of its config.json, summary.json, metrics.jsonl, steps.csv and spec.mask), beside
# the specs `maskc reproduce distill` distilled (distilled/), and the sweep's or suite's
# results.json (DEST/results.json: its grid, or its suite and preset). Weights, checkpoints, masks
# and results.md stay behind: `maskc report DEST` reads the archive as it reads run folders and
# writes the tables again. Runs already in DEST's archive stay unless a run of the
# same path replaces them, so a study cell can grow by seeds.
#   bash scripts/keep_runs.sh RESULTS_FOLDER DEST
#   bash scripts/keep_runs.sh runs/study/addition-bf16 docs/results/study/addition-bf16
# A Boolean task with n inputs records 2^n Fourier coefficients per evaluation (n = 15: 8 MB of
# metrics.jsonl a run). The kept copies hold the FOURIER_KEEP (default 64) largest in magnitude of
# each record's "fourier" object, and say so in "fourier_kept": {"kept": K, "of": N}; every other
# file is kept byte for byte.
set -euo pipefail
if [[ $# -ne 2 || ! -d $1 ]]; then
  echo "usage: scripts/keep_runs.sh RESULTS_FOLDER DEST   (RESULTS_FOLDER: a reproduce/sweep --out)" >&2
  exit 2
fi
src=${1%/}
dest=${2%/}
keep=${FOURIER_KEEP:-64}
python=/usr/bin/python3  # the standard library alone: json, gzip

mkdir -p "$dest"
"$python" - "$src" "$dest" "$keep" <<'PY'
import gzip, io, json, os, sys, zlib

src, dest, keep = sys.argv[1], sys.argv[2], int(sys.argv[3])
FILES = ["config.json", "summary.json", "metrics.jsonl", "steps.csv", "spec.mask"]
ARCHIVE = os.path.join(dest, "runs.jsonl.gz")


def trim(record):
    f = record.get("fourier")
    if isinstance(f, dict) and len(f) > keep:
        top = sorted(f, key=lambda k: -abs(f[k]) if isinstance(f[k], (int, float)) else 0)[:keep]
        record["fourier"] = {k: f[k] for k in sorted(top)}
        record["fourier_kept"] = {"kept": keep, "of": len(f)}
        return True
    return False


def kept_text(name, text):
    """The file's text, its Fourier objects trimmed (and then rewritten) when they are larger."""
    if name not in ("summary.json", "metrics.jsonl") or '"fourier"' not in text:
        return text
    if name.endswith(".jsonl"):
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
        if not any([trim(r) for r in records]):
            return text
        return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    record = json.loads(text)
    return json.dumps(record, indent=2) + "\n" if trim(record) else text


runs = {}
if os.path.exists(ARCHIVE):
    # A damaged archive stops here, before anything is written: it is evidence, never replaced.
    try:
        with gzip.open(ARCHIVE, "rt", encoding="utf-8") as old:
            for number, line in enumerate(old, 1):
                if line.strip():
                    run = json.loads(line)
                    if not isinstance(run, dict) or not isinstance(run.get("path"), str):
                        raise ValueError("line %d is not a kept run" % number)
                    runs[run["path"]] = run
    except (OSError, EOFError, ValueError, zlib.error) as e:
        sys.exit("keep_runs: %s: not a readable archive (%s); nothing written" % (ARCHIVE, e))
found = 0
for folder, _, names in sorted(os.walk(src)):
    if "summary.json" not in names or "config.json" not in names:
        continue
    files = {}
    for name in FILES:
        if name in names:
            where = os.path.join(folder, name)
            try:
                with open(where, encoding="utf-8", newline="") as f:
                    files[name] = kept_text(name, f.read())
            except (OSError, ValueError) as e:
                sys.exit("keep_runs: %s: %s; nothing written" % (where, e))
    path = os.path.join("runs", os.path.relpath(folder, src)).replace(os.sep, "/")
    runs[path] = {"path": path, "files": files}
    found += 1
if found == 0:
    sys.exit("keep_runs: no finished run (summary.json) under %s" % src)
results = None
where = os.path.join(src, "results.json")
if os.path.exists(where):
    try:
        with open(where, encoding="utf-8", newline="") as f:
            results = f.read()
        if not isinstance(json.loads(results), dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as e:
        sys.exit("keep_runs: %s: %s; nothing written" % (where, e))
buffer = io.BytesIO()
with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, compresslevel=9) as out:
    for path in sorted(runs):
        out.write((json.dumps(runs[path], ensure_ascii=False, sort_keys=True) + "\n")
                  .encode("utf-8"))
with open(ARCHIVE + ".tmp", "wb") as f:
    f.write(buffer.getvalue())
os.replace(ARCHIVE + ".tmp", ARCHIVE)
if results is not None:
    with open(os.path.join(dest, "results.json.tmp"), "w", encoding="utf-8", newline="") as f:
        f.write(results)
    os.replace(os.path.join(dest, "results.json.tmp"), os.path.join(dest, "results.json"))
print("keep_runs: %d runs of %s -> %s (%d runs, %d bytes)"
      % (found, src, ARCHIVE, len(runs), len(buffer.getvalue())))
PY
if [[ -d $src/distilled ]]; then
  mkdir -p "$dest/distilled"
  cp "$src"/distilled/*.mask "$dest/distilled/"
fi
