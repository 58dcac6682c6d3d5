#!/bin/sh
# `maskc train --data` / `--truth-table` end to end (tests/cmake/own_data_training.cmake): every mistake in
# a data file, a span the spec lacks and a truth table that does not fit the spec is exit 1 with
# FILE:LINE (or FILE) and "error:" in the message, and leaves no run folder; flags that cannot go
# together (--data without --predict or --spec) are exit 2.
# Usage: your_data_cli.sh MASKC SOURCE_DIR PYTHON
set -u
maskc=$1
source_dir=$2
python=$3
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d" || exit 1
failures=0

printf 'mask rev\ntokens a[3], eq, c[3]\ndigits a msb_first\nhard causal\nopen diagonal\n' > rev.mask
printf '1 2 3 = 3 2 1\n4 5 6 = 6 5 4\n7 8 9 = 9 8 7\n' > train.txt
loud="--dim 16 --depth 1 --heads 1 --head-dim 8 --mlp 16 --epochs 1 --threads 1 --device cpu"
small="$loud -q"

# expect_exit_code CODE NAME EXPECTED-TEXT ARGS...: exit CODE, EXPECTED-TEXT in stderr, no run
# folder. expect_error: exit 1 (input error); expect_usage_error: exit 2 (flags that cannot go
# together).
expect_exit_code() {
  want=$1
  name=$2
  expected=$3
  shift 3
  "$maskc" train "$@" $small --out run 2> err
  code=$?
  if [ $code -ne "$want" ] || ! grep -qF -- "$expected" err || [ -e run ]; then
    echo "FAIL $name: exit $code, run folder $( [ -e run ] && echo left || echo none )"
    echo "  expected: $expected"
    sed 's/^/  stderr: /' err
    failures=$((failures + 1))
    rm -rf run
  fi
}

expect_error() { expect_exit_code 1 "$@"; }
expect_usage_error() { expect_exit_code 2 "$@"; }

printf '1 2 3 = 3 2 1\n1 2 = 2 1\n' > short.txt
expect_error wrong_count "short.txt:2:10: error: found 5 symbols; expected 7, one per token of the spec's layout \`a[3], eq, c[3]\` (N = 7)" \
  --data short.txt --spec rev.mask --predict c
: > empty.txt
expect_error empty_file "empty.txt:1:1: error: no examples: the file is empty" \
  --data empty.txt --spec rev.mask --predict c
printf '1 2 3 = 3 2 1\n3 2 1 = 1 2 x\n' > unknown.txt
expect_error unknown_symbol "unknown.txt:2:13: error: symbol 'x' (token c[2], which the model predicts) never occurs in train.txt" \
  --data train.txt --test-data unknown.txt --spec rev.mask --predict c
printf '9 9 9 = 1 1 1\n1 2 3 = 3 2 1\n' > train9.txt  # 9 occurs, but never in c
printf '3 2 1 = 1 2 3\n3 2 1 = 1 2 9\n' > predicted.txt
expect_error never_predicted "predicted.txt:2:13: error: symbol '9' (token c[2], which the model predicts) never occurs in span c of train9.txt" \
  --data train9.txt --test-data predicted.txt --spec rev.mask --predict c
printf '1 2 3 = 3 2 1\n3 2 \377 = 1 2 3\n' > bytes.txt
expect_error not_utf8 "bytes.txt:2:5: error: byte 0xff is not UTF-8" \
  --data bytes.txt --spec rev.mask --predict c
printf '1 2 3 = 3 2 1\n3 2\000 1 = 1 2 3\n' > nul.txt
expect_error nul_byte "nul.txt:2:4: error: the control character 0x00 (NUL) is not text" \
  --data nul.txt --spec rev.mask --predict c
expect_error no_such_span "rev.mask: error: --predict 'd': unknown span 'd' (spans: a[3], eq, c[3])" \
  --data train.txt --spec rev.mask --predict d
expect_usage_error no_predict "--data needs --predict SPAN" --data train.txt --spec rev.mask
expect_usage_error no_spec "--data needs a spec" --data train.txt --predict c
expect_error missing_file "cannot read data file 'missing.txt'" --data missing.txt --spec rev.mask --predict c

printf 'mask t\ntokens cls, x[2]\nopen diagonal\n' > t.mask
printf 'x0,x1,z,y\n1,1,1,1\n' > bad.csv
expect_error table_column "bad.csv:1:7: error: column 'z' names no token" --truth-table bad.csv --spec t.mask
printf 'x0;x1;y\n1;1;1\n' > semicolon.csv
expect_error table_semicolon "semicolon.csv:1:3: error: column name 'x0;x1;y' holds \`;\`; the file looks \`;\`-separated" \
  --truth-table semicolon.csv --spec t.mask
printf 'x0,x1,y\n1,1,1\000\n' > nul.csv
expect_error table_nul "nul.csv:2:6: error: the control character 0x00 (NUL) is not text" --truth-table nul.csv --spec t.mask
: > empty.csv
expect_error table_empty "empty.csv:1:1: error: empty truth table" --truth-table empty.csv --spec t.mask
printf 'x0,y\n1,1\n-1,0\n' > narrow.csv
expect_error table_token "no column gives token x[1]" --truth-table narrow.csv --spec t.mask

# A good run: exit 0, vocab.json in the folder, the summary's keys, and a spec without
# `hard causal` gets it with a warning.
printf 'mask open\ntokens a[3], eq, c[3]\ndefault open\n' > open.mask
"$maskc" train --data train.txt --spec open.mask --predict c --init mask $loud --out good --json > summary.json 2> err
code=$?
if [ $code -ne 0 ] || [ ! -s good/vocab.json ] || [ ! -s good/summary.json ] ||
   ! grep -q '"token_accuracy"' summary.json || ! grep -q "training adds it" err ||
   ! grep -q "held out" err; then
  echo "FAIL good_run: exit $code"; cat err; failures=$((failures + 1))
fi
quiet=$("$maskc" train --data train.txt --spec rev.mask --predict c $small 2>&1)
if [ -n "$(printf '%s' "$quiet" | grep -v 'sequence accuracy\|prior mass\|mask drift\|steps in')" ]; then
  echo "FAIL quiet_run_says_only_the_summary: $quiet"; failures=$((failures + 1))
fi

# The shipped example (examples/your-data, docs/your-data.md): its generators write the shipped
# files, its specs compile, and validate finds every output reachable.
ex="$source_dir/examples/your-data"
"$python" "$ex/make_data.py" --out . --table reverse.csv && "$python" "$ex/make_table.py" --out pair.csv &&
  cmp train.txt "$ex/train.txt" && cmp test.txt "$ex/test.txt" && cmp pair.csv "$ex/pair.csv" ||
  { echo "FAIL example_files: the generators no longer write the shipped files"; failures=$((failures + 1)); }
"$maskc" validate "$ex/reverse.mask" --truth-table reverse.csv \
  --readout "before c[0]" "before c[1]" "before c[2]" "before c[3]" "before c[4]" > validate.out ||
  { echo "FAIL example_reverse_validates"; failures=$((failures + 1)); }
"$maskc" validate "$ex/pair.mask" --truth-table "$ex/pair.csv" > validate.out ||
  { echo "FAIL example_pair_validates"; failures=$((failures + 1)); }

# A data file whose reading would not fit in memory is refused before it is read: under ulimit -v
# 3.4 GB (maskc-runtime maps about 2.7 GB, LibTorch and the CUDA libraries it loads, before it
# reads data), 80 MB of data at 16 bytes per byte.
yes '1 2 3 = 3 2 1' | head -n 6000000 > big.txt
(ulimit -v 3400000 && "$maskc" train --data big.txt --spec rev.mask --predict c $small --out run 2> err)
code=$?
if [ $code -ne 1 ] || ! grep -q "error: reading big.txt (80.1 MiB) would take about 1.3 GiB of memory" err ||
  [ -e run ]; then
  echo "FAIL data_too_large: exit $code"; sed 's/^/  stderr: /' err; failures=$((failures + 1))
fi
rm -f big.txt

[ $failures -eq 0 ] && echo "all your-data CLI checks passed"
exit $failures
