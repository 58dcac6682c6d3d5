#!/usr/bin/env bash
# Builds one libFuzzer target of fuzz/ in ./build-fuzz (clang, ASan + UBSan, everything it links
# instrumented) and runs it for SECONDS (default 60), printing libFuzzer's final stats.
#   bash scripts/fuzz.sh TARGET [SECONDS]
#   TARGET: fuzz_spec | fuzz_safetensors | fuzz_npy | fuzz_truth_table | fuzz_sequence_file |
#           fuzz_idx
#   FUZZ_ARGS="-jobs=2 -workers=2" adds libFuzzer flags; JOBS=N sets the build's parallelism.
# Corpus: build-fuzz/corpus/TARGET (grows across runs), seeded from build-fuzz/seeds/TARGET:
# the .mask files of specs/ and tests/data/, the CSV tables of tests/data/, and tensor files that
# make_seeds (fuzz/make_seeds.cpp) writes from those specs. Crashes, leaks, timeouts and
# out-of-memory inputs land in fuzz/findings/TARGET/ (gitignored); replay one with
#   build-fuzz/bin/TARGET fuzz/findings/TARGET/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
targets="fuzz_spec fuzz_safetensors fuzz_npy fuzz_truth_table fuzz_sequence_file fuzz_idx"
target=${1:-}
seconds=${2:-60}
if [[ " $targets " != *" $target "* ]] || ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh TARGET [SECONDS]   (TARGET: $targets)" >&2
  exit 2
fi

# Optional packages, for fuzzing only: clang and its runtime libraries (libFuzzer, ASan, UBSan).
# scripts/setup.sh given package names installs just those, when missing.
bash scripts/setup.sh clang libclang-rt-14-dev

count() { find "$1" -maxdepth 1 -type f | wc -l; }
build="build-fuzz"
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer"
flags+=" -fno-sanitize-recover=undefined"
# -Werror too (MASKPRIOR_WERROR): our code and the harnesses compile clean under clang 14 as well.
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMASKPRIOR_WERROR=ON -DMASKPRIOR_FUZZ=ON -DMASKPRIOR_WITH_TORCH=OFF -DMASKPRIOR_WITH_PYTHON=OFF \
  -DMASKPRIOR_BUILD_TESTS=OFF -DMASKPRIOR_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target "$target" make_seeds

# Seeds, laid anew each run (the corpus itself is kept).
seeds=$build/seeds/$target
corpus=$build/corpus/$target
findings=fuzz/findings/$target
rm -rf "$seeds"
mkdir -p "$seeds" "$corpus" "$findings"
mapfile -t specs < <(find specs tests/data examples -name '*.mask' 2>/dev/null | sort)
case $target in
  fuzz_spec)
    cp "${specs[@]}" "$seeds"/ 2>/dev/null || true
    # Long flat chains: the parser's rule depth stays low while the expression tree gets deep.
    { echo 'mask chain'; printf 'param n = 1'; printf '+1%.0s' $(seq 1200); echo
      echo 'tokens x[3]'; printf 'open x[0] -> x[0'; printf '*1%.0s' $(seq 1200); echo ']'
    } >"$seeds/chain.mask" ;;
  fuzz_truth_table)  # the tables of tests/data and examples, and a few more shapes
    find tests/data examples -name '*.csv' -exec cp {} "$seeds"/ \;
    printf 'x0,x1,x2,y\n-1,-1,-1,-1\n1,-1,-1,1\n-1,1,-1,1\n1,1,1,-1\n' >"$seeds/three.csv"
    printf '# 0/1 inputs, two outputs\na,b,y,z,seen\n0,0,0,1,1\n1,0,1,1,0\n0,1,1,0,1\n' >"$seeds/bits.csv"
    printf 'x[0] , x[1] ,y\r\n1 , 1 , 0.5\r\n-1 , 1 , -0.25e1\r\n' >"$seeds/crlf.csv"
    ;;
  fuzz_sequence_file)  # the shipped example's data and a few lines in the harness's layout
    find examples -name '*.txt' -size -64k -exec cp {} "$seeds"/ \;
    printf '1 2 3 = 3 2\n4 5 6 = 6 5\n' >"$seeds/small.txt"
    ;;
  fuzz_idx)  # small IDX files, plain and gzipped
    printf '\x00\x00\x08\x01\x00\x00\x00\x03abc' >"$seeds/vector.idx"
    printf '\x00\x00\x08\x02\x00\x00\x00\x02\x00\x00\x00\x02wxyz' >"$seeds/matrix.idx"
    gzip -c "$seeds/matrix.idx" >"$seeds/matrix.idx.gz"
    ;;
  fuzz_safetensors | fuzz_npy)
    "$build"/bin/make_seeds "$build/seeds/tensors" "${specs[@]}" 2>/dev/null | tail -1
    ext=${target#fuzz_}
    cp "$build/seeds/tensors/$ext"/* "$seeds"/
    ;;
esac
echo "fuzz: $target for ${seconds} s, $(count "$seeds") seeds, corpus $corpus"

# Scratch files of the tensor and CSV targets go to tmpfs when there is one.
if [[ -d /dev/shm && -w /dev/shm ]]; then export TMPDIR=/dev/shm; fi
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1${ASAN_OPTIONS_EXTRA:+:$ASAN_OPTIONS_EXTRA}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
log=$build/logs/$target.log
mkdir -p "$(dirname "$log")"
before=$(count "$findings")
set +e
# shellcheck disable=SC2086  # FUZZ_ARGS is a list of flags
"$build/bin/$target" -max_total_time="$seconds" -print_final_stats=1 -timeout=25 \
  -rss_limit_mb=4096 -max_len="${FUZZ_MAX_LEN:-65536}" -artifact_prefix="$findings/" \
  ${FUZZ_ARGS:-} "$corpus" "$seeds" 2>&1 | tee "$log" | grep -E 'INITED|DONE|stat::|ERROR|SUMMARY|==[0-9]+==|fuzz:|#[0-9]+ +pulse'
status=${PIPESTATUS[0]}
set -e
rm -f "${TMPDIR:-/tmp}/maskprior_${target}_"*
echo "fuzz: corpus now $(count "$corpus") inputs; full log $log"
after=$(count "$findings")
if ((status)) || ((after > before)); then
  echo "fuzz: FINDING: $target exited $status; the end of its log:" >&2
  tail -n 60 "$log" >&2
  echo "fuzz: $findings now holds:" >&2
  ls -l "$findings" >&2
  exit 1
fi
echo "fuzz: $target: no findings in ${seconds} s ($after older ones in $findings)"
