#!/usr/bin/env bash
# Writes the runs of a kept archive (DEST/runs.jsonl.gz of scripts/keep_runs.sh) back out as run
# folders under RESULTS_FOLDER, each at the path it was kept from, so that a study cell grows by
# seeds on a fresh machine: `maskc sweep` (or reproduce) with the same --out then counts the
# unpacked runs as finished (they hold summary.json) and trains only the seeds that are missing,
# and keep_runs.sh adds the new ones to the archive. The folders hold what the archive keeps
# (config, summary, metrics, step log, spec): no weights, so `maskc distill` cannot read them.
# A folder that already holds a summary.json is left as it is.
#   bash scripts/unpack_runs.sh ARCHIVE_FOLDER RESULTS_FOLDER
#   bash scripts/unpack_runs.sh docs/results/faithful/std1 runs/faithful/std1
set -euo pipefail
if [[ $# -ne 2 || ! -f $1/runs.jsonl.gz ]]; then
  echo "usage: scripts/unpack_runs.sh ARCHIVE_FOLDER RESULTS_FOLDER   (ARCHIVE_FOLDER holds runs.jsonl.gz)" >&2
  exit 2
fi
python=/usr/bin/python3  # the standard library alone: json, gzip
"$python" - "${1%/}/runs.jsonl.gz" "${2%/}" <<'PY'
import gzip, json, os, sys, zlib

archive, dest = sys.argv[1], sys.argv[2]


def fail(where, what):
    sys.exit("unpack_runs: %s%s: %s" % (archive, where, what))


# The whole archive is read and checked before anything is written: a damaged one writes nothing.
runs = []
try:
    with gzip.open(archive, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                run = json.loads(line)
            except ValueError as e:
                fail(" line %d" % number, "not JSON (%s)" % e)
            path = run.get("path", "") if isinstance(run, dict) else ""
            parts = path.split("/") if isinstance(path, str) else []
            files = run.get("files") if isinstance(run, dict) else None
            if (parts[:1] != ["runs"] or len(parts) < 2 or any(p in ("", ".", "..") for p in parts)
                    or not isinstance(files, dict)):
                fail(" line %d" % number, "not a kept run (path %r)" % (path,))
            if "summary.json" not in files or "config.json" not in files:
                fail(" line %d" % number, "%s lacks its config.json or summary.json" % path)
            for name, text in files.items():
                if "/" in name or name in ("", ".", "..") or not isinstance(text, str):
                    fail(" line %d" % number, "bad file %r" % (name,))
            runs.append((parts, files))
except (OSError, EOFError, UnicodeDecodeError, zlib.error) as e:
    fail("", "not a readable archive (%s)" % e)

written = kept = 0
for parts, files in runs:
    folder = os.path.join(dest, *parts[1:])
    if os.path.exists(os.path.join(folder, "summary.json")):
        kept += 1
        continue
    # summary.json last: a folder is a finished run only once everything else is there.
    try:
        os.makedirs(folder, exist_ok=True)
        for name in sorted(files, key=lambda name: name == "summary.json"):
            target = os.path.join(folder, name)
            with open(target + ".tmp", "w", encoding="utf-8", newline="") as f:
                f.write(files[name])
            os.replace(target + ".tmp", target)
    except OSError as e:
        sys.exit("unpack_runs: cannot write %s: %s (%d runs written before it)" % (folder, e, written))
    written += 1
print("unpack_runs: %d runs of %s -> %s (%d already there)" % (written, archive, dest, kept))
PY
