#!/usr/bin/env bash
# Builds maskprior with AddressSanitizer + UndefinedBehaviorSanitizer in ./build-asan
# (RelWithDebInfo) and runs the whole CTest suite under them; any sanitizer report fails the run.
#   bash scripts/sanitize.sh                  (without LibTorch: the default; in ./build-asan)
#   bash scripts/sanitize.sh --with-torch     (LibTorch ON: adds runtime/, train/, experiments/,
#                                             maskc-runtime and their tests, in ./build-asan-torch)
#   MASKPRIOR_WITH_TORCH=ON bash scripts/sanitize.sh  (the same as --with-torch)
#   JOBS=N sets the build's parallelism (default: nproc); extra arguments go to ctest (-R, -E).
# With LibTorch, LeakSanitizer reads scripts/lsan-torch.supp: leaks inside LibTorch's own
# (uninstrumented, prebuilt) libraries that are not ours to fix, each with the reason. ccache is
# used when installed.
# LibTorch is off by default: its tests are slow enough without ASan (training steps on the
# CPU), ASan makes them several times slower, and LibTorch's own code, prebuilt without
# instrumentation, isn't ours to check; with ON, only our calls into it are instrumented.
# A report makes the process exit 86 (not 1, which maskc uses for a bad spec, so a CLI test that
# expects exit 1 cannot pass over a report), and every report is also written to
# build-asan/sanitizer-logs/ (reports of child processes whose stderr a test captures land there
# too); the script fails if that folder is not empty at the end.
# Excluded by default (SANITIZE_EXCLUDE="" runs them; they fail with "ERROR: Failed to mmap" or
# "ReserveShadowMemoryRange failed ... Perhaps you're using ulimit -v"): the tests that run code
# under an address-space limit (RLIMIT_AS / `ulimit -v` of 1-2 GB): every ReadersTest (its
# refusal() and maskc() helpers set one) and MaskcTest.OutOfMemoryIsAClearErrorNotBadAlloc.
# ASan reserves about 16 TiB of shadow address space, so nothing runs under such a limit; and
# an allocation ASan cannot serve aborts instead of throwing std::bad_alloc, which those tests
# are about. Their inputs are covered by the fuzz targets (scripts/fuzz.sh) instead.
# Python is off: the module would load an instrumented extension into an uninstrumented
# interpreter (needs LD_PRELOAD of the ASan runtime). Benchmarks are off: they test nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
torch=${MASKPRIOR_WITH_TORCH:-OFF}
if [[ ${1:-} == --with-torch ]]; then
  torch=ON
  shift
fi
build="build-asan"
suppressions=""
if [[ $torch == ON ]]; then
  build="build-asan-torch"
  suppressions=":suppressions=$PWD/scripts/lsan-torch.supp"
fi
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
# Exported too, so that CMake projects configured by the tests (tests/consumer, against the
# install of this build) compile and link with the same sanitizers as the libraries they use.
export CXXFLAGS="$san" LDFLAGS="-fsanitize=address,undefined"
logs="$PWD/$build/sanitizer-logs"
# detect_leaks=1: LeakSanitizer works in this sandbox (checked when this script was written;
# where ptrace is forbidden it dies with "LeakSanitizer has encountered a fatal error": run with
# ASAN_OPTIONS_EXTRA=detect_leaks=0 there, and say so with the results).
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:exitcode=86:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:log_path=$logs/asan${ASAN_OPTIONS_EXTRA:+:$ASAN_OPTIONS_EXTRA}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=86:log_path=$logs/ubsan"
export LSAN_OPTIONS="print_suppressions=0$suppressions"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMASKPRIOR_WITH_TORCH="$torch" \
  "${launcher[@]}" \
  -DMASKPRIOR_WITH_PYTHON=OFF -DMASKPRIOR_BUILD_BENCH=OFF -DMASKPRIOR_BUILD_TESTS=ON \
  -DCMAKE_CXX_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
rm -rf "$logs"
mkdir -p "$logs"
start=$(date +%s)
cmake --build "$build" -j "$jobs"
built=$(date +%s)
exclude=${SANITIZE_EXCLUDE-'^(ReadersTest\.|MaskcTest\.OutOfMemoryIsAClearErrorNotBadAlloc$)'}
status=0
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 900 ${exclude:+-E "$exclude"} \
  "$@" || status=$?
end=$(date +%s)
echo "sanitize: build $((built - start)) s, ctest $((end - built)) s (MASKPRIOR_WITH_TORCH=$torch)"
if compgen -G "$logs/*" >/dev/null; then
  for f in "$logs"/*; do
    echo "===== $f"
    cat "$f"
  done
  echo "sanitize: FAILED: sanitizer reports above (also in $logs)" >&2
  exit 1
fi
if ((status)); then
  echo "sanitize: FAILED: ctest failed without a sanitizer report (see above)" >&2
  exit "$status"
fi
echo "sanitize: clean (ASan + UBSan, detect_leaks per ASAN_OPTIONS)"
