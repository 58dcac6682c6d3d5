# Sourced by the study scripts (scripts/*_study.sh), not run: one study cell is a `maskc sweep`
# into $out/NAME whose finished runs are kept as one archive under $keep/NAME.
#   kept_sweep NAME SWEEP_FLAGS... -- TRAIN_FLAGS...
# Runs an earlier machine kept are unpacked first (scripts/unpack_runs.sh), so they count as
# finished and only the missing seeds train; rerunning resumes stopped runs. Needs $maskc, $out and
# $keep set, and the repository root as the working folder.
kept_sweep() {
  local name=$1 sweep=()
  shift
  while [[ $1 != -- ]]; do
    sweep+=("$1")
    shift
  done
  shift
  if [[ -f $keep/$name/runs.jsonl.gz ]]; then
    bash scripts/unpack_runs.sh "$keep/$name" "$out/$name"
  fi
  "$maskc" sweep "${sweep[@]}" --out "$out/$name" -- "$@"
  bash scripts/keep_runs.sh "$out/$name" "$keep/$name"
}
