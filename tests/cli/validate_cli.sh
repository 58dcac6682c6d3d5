#!/usr/bin/env bash
# `maskc validate` on decoders end to end (tests/cmake/validate.cmake): the running sum of
# examples/your-data (running_sum.mask; make_data.py writes its table), read by default at the
# rows that predict the answer, judged under both feedback rules, from a truth table and from
# declared dependencies (--depends); mistakes in --depends and --feedback. One case per CTest test.
# Usage: validate_cli.sh MASKC SOURCE_DIR CASE PYTHON
set -u  # no pipefail: a case greps what a failing maskc prints
maskc=$1
examples=$2/examples/your-data
case_name=$3
python=$4
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d" || exit 1

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# expect CODE TEXT ARGS...: `maskc validate ARGS` exits CODE and prints TEXT (stdout or stderr).
expect() {
  local want=$1 text=$2
  shift 2
  "$maskc" validate "$@" >out 2>&1
  local got=$?
  [[ $got -eq $want ]] || fail "maskc validate $* exited $got, not $want: $(cat out)"
  grep -qF -- "$text" out || fail "maskc validate $* does not print '$text': $(cat out)"
}

sums=$examples/running_sum.mask

# A 3-digit running sum's table (1,000 rows). No --readout: outputs are read at eq, c[0], c[1].
# The strict rule fails (c[1]'s row sees a[1] and c[0], not a[0]); --feedback state passes.
running_sum_table() {
  "$python" "$examples/make_data.py" --task running-sum --digits 3 --train 10 --test 10 \
    --table sums.csv || fail "make_data.py"
  expect 1 "output y1 (read at c[0])" "$sums" -D k=3 --truth-table sums.csv
  grep -qF "  feedback     token: c[0] to c[2] fed back (3 answer tokens) carry only themselves" \
    out || fail "no feedback line: $(cat out)"
  grep -qF "error: output y1 needs a[0], unreachable from c[0] within 1 layer" out ||
    fail "no error for y1: $(cat out)"
  grep -qF "(3 unreachable inputs; feedback rule: token)" out || fail "verdict: $(cat out)"
  expect 1 "feedback rule: token" "$sums" -D k=3 --truth-table sums.csv --feedback token
  expect 0 "ok: every input the target depends on reaches its readout (feedback rule: state)" \
    "$sums" -D k=3 --truth-table sums.csv --feedback state
  # The same rows named as a span.
  expect 0 "output y2 (read at c[1])" "$sums" -D k=3 --truth-table sums.csv --feedback state \
    --readout "before c"
}

# No table at all: 6 digits (a table would have 10^6 rows), declared.
running_sum_depends() {
  expect 1 "error: output c[5] needs a[0], a[1], a[2], a[3], a[4], unreachable from c[4]" \
    "$sums" --depends "c[i]: a[..i+1]"
  grep -qF "  not computed support, MDI: --depends declares" out || fail "not computed: $(cat out)"
  expect 0 "(feedback rule: state)" "$sums" --depends "c[i]: a[..i+1]" --feedback state
  "$maskc" validate "$sums" --depends "c[i]: a[..i+1]" --feedback state --json >report.json ||
    fail "--json: $(cat report.json)"
  "$python" - report.json <<'PY' || fail "report.json: $(cat report.json)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] and r["declared"] and r["support"] is None, r
assert r["feedback"] == {"rule": "state", "fed_back": [f"c[{j}]" for j in range(6)]}, r
assert r["outputs"][2]["depends_on"] == ["a[0]", "a[1]", "a[2]"], r
assert r["outputs"][2]["readout"] == "c[1]", r
PY
}

# Text that is no declaration: a usage error (2) with its column; a declaration that does not fit
# the spec: an input error (1) at --depends:FLAG:COLUMN, with the text and a caret.
depends_mistakes() {
  expect 2 "--depends: column 6 of 'c[i] a[..i+1]': expected ':' after the output c[i], found 'a'" \
    "$sums" --depends "c[i] a[..i+1]"
  expect 2 "flag 2, column 9 of 'c[i]: a[j]': unknown name 'j'" \
    "$sums" --depends "c[0]: a[0]" --depends "c[i]: a[j]"
  expect 1 "--depends:1:7: error: spec 'running_sum': unknown span 'z' (spans: a[6], eq, c[6])" \
    "$sums" --depends "c[i]: z[i]"
  grep -qxF "  c[i]: z[i]" out && grep -qxF "        ^" out || fail "no caret: $(cat out)"
  expect 1 "--depends:1:7: error: a[i+1] is a[6] at i = 5 (output c[5]), outside it" \
    "$sums" --depends "c[i]: a[i+1]"
  expect 2 "--feedback" "$sums" --depends "c[i]: a[i]" --feedback carry
  expect 2 "" "$sums" --depends "c[i]: a[i]" --task addition  # two targets
}

# A decoder's table without --readout is read where the answer is predicted (reverse.mask), and a
# spec with neither cls nor `hard causal` says so without blaming --readout.
decoder_default_readout() {
  "$python" "$examples/make_data.py" --digits 3 --train 10 --test 10 --table rev.csv ||
    fail "make_data.py"
  expect 0 "output y0 (read at eq)" "$examples/reverse.mask" -D k=3 --truth-table rev.csv
  printf 'mask plain\ntokens a[3], eq, c[3]\nopen diagonal\n' >plain.mask
  expect 1 "spec 'plain' has no token \`cls\`, where the output of truth table rev.csv is read by default" \
    plain.mask --truth-table rev.csv
  grep -qF -- "--readout cls" out && fail "blames --readout: $(cat out)"
  expect 1 "--feedback state: nothing is fed back in spec 'plain'" plain.mask --truth-table rev.csv \
    --readout eq --feedback state
}

"$case_name"
