#!/bin/bash
# The examples of docs/language-reference.md are real (tests/cmake/docs.cmake):
# - every ```mask block compiles with exit 0, every ```mask-invalid block fails with exit 1;
#   each block is written to NAME.mask, NAME taken from its `mask NAME` statement;
# - every ```text block whose first line is `$ maskc ARGS` shows exactly what `maskc ARGS`
#   prints (stdout and stderr together), run in the folder holding those files.
# On a mismatch it prints a diff; paste the actual output into the page to update it.
# Usage: language_reference.sh MASKC [PAGE]
set -u
if [ $# -lt 1 ]; then
  echo "usage: $0 MASKC [PAGE]" >&2
  exit 2
fi
maskc=$(realpath "$1")
page=$(realpath "${2:-$(dirname "$0")/../../docs/language-reference.md}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/blocks" "$work/run"

# Split the page into numbered blocks: blocks/N.kind (mask, mask-invalid or cmd) and blocks/N.body.
awk -v dir="$work/blocks" '
  function close_block() { if (file != "") close(file); file = ""; kind = "" }
  /^```/ && kind != "" { close_block(); next }
  kind == "maybe-cmd" {
    if ($0 ~ /^\$ maskc /) {
      kind = "cmd"; n++; file = dir "/" n ".body"
      print "cmd" > (dir "/" n ".kind"); close(dir "/" n ".kind")
      print substr($0, 9) > (dir "/" n ".args"); close(dir "/" n ".args")
      printf "" > file
    } else {
      kind = "skip"
    }
    next
  }
  kind == "skip" { next }
  kind != "" { print > file; next }
  /^```mask(-invalid)?[ \t]*$/ {
    n++; kind = substr($0, 4); sub(/[ \t]+$/, "", kind); file = dir "/" n ".body"
    print kind > (dir "/" n ".kind"); close(dir "/" n ".kind")
    printf "" > file
    next
  }
  /^```text[ \t]*$/ { kind = "maybe-cmd"; next }
  /^```/ { kind = "skip"; next }
' "$page" || exit 1

failures=0
specs=0
commands=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# First pass: write and compile every spec block.
# Blocks are numbered 1, 2, ... in page order.
blocks=$(find "$work/blocks" -name '*.kind' | wc -l)
for n in $(seq 1 "$blocks"); do
  kind=$(cat "$work/blocks/$n.kind")
  [ "$kind" = cmd ] && continue
  body="$work/blocks/$n.body"
  name=$(grep -v '^[[:space:]]*#' "$body" | grep -m1 -oE '^[[:space:]]*mask[[:space:]]+[A-Za-z_][A-Za-z0-9_]*' |
    awk '{ print $2 }')
  if [ -z "$name" ]; then
    fail "block $n (\`\`\`$kind) has no \`mask NAME\` statement"
    continue
  fi
  if [ -e "$work/run/$name.mask" ]; then
    fail "two blocks are called $name: give each example its own \`mask NAME\`"
    continue
  fi
  cp "$body" "$work/run/$name.mask"
  specs=$((specs + 1))
  (cd "$work/run" && "$maskc" compile "$name.mask" -o "$work/$name.check.safetensors") \
    > "$work/out" 2>&1
  code=$?
  if [ "$kind" = mask ] && [ $code -ne 0 ]; then
    fail "\`\`\`mask block $name does not compile (exit $code):"
    sed 's/^/  /' "$work/out"
  elif [ "$kind" = mask-invalid ] && [ $code -ne 1 ]; then
    fail "\`\`\`mask-invalid block $name exits $code, expected 1 (a spec error)"
    sed 's/^/  /' "$work/out"
  fi
done

# Second pass: every `$ maskc ARGS` block prints what the page shows.
for n in $(seq 1 "$blocks"); do
  [ "$(cat "$work/blocks/$n.kind")" = cmd ] || continue
  args=$(cat "$work/blocks/$n.args")
  commands=$((commands + 1))
  # The arguments are split on spaces and never expanded as file patterns (set -f).
  # shellcheck disable=SC2086
  (set -f && cd "$work/run" && "$maskc" $args) > "$work/actual" 2>&1
  if ! diff -u "$work/blocks/$n.body" "$work/actual" > "$work/diff"; then
    fail "\`maskc $args\` prints something else than the page shows (--- page, +++ actual):"
    sed 's/^/  /' "$work/diff"
  fi
done

if [ $specs -eq 0 ] || [ $commands -eq 0 ]; then
  fail "found $specs spec blocks and $commands command blocks in $page; expected some of each"
fi
echo "$specs spec blocks, $commands command blocks checked in $page; $failures failure(s)"
[ $failures -eq 0 ]
