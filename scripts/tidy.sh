#!/usr/bin/env bash
# Static checks that must report nothing:
#  1. clang-tidy (.clang-tidy: bugprone, performance, naming, function size) over every layer
#     that does not include LibTorch. clang-tidy 14 cannot parse Debian's LibTorch 1.13 headers
#     (errors inside c10::IValue with libstdc++ 12), so runtime/, train/, experiments/ (built
#     only with LibTorch) and maskc-runtime's commands are checked by GCC's warnings (-Werror in
#     scripts/build.sh) and by (2).
#  2. scripts/function_length.py: no function body over 80 lines, in every source file.
#   bash scripts/tidy.sh      (about 3 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
python3 scripts/function_length.py --max 80 core grammar compiler io render tasks validate runfolder \
  report runtime train experiments serve cli tests bench fuzz python
build=build-tidy
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMASKPRIOR_WITH_TORCH=OFF \
  -DMASKPRIOR_BUILD_TESTS=OFF -DMASKPRIOR_BUILD_BENCH=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
files=$(ls core/*.cpp compiler/*.cpp io/*.cpp render/*.cpp tasks/*.cpp validate/*.cpp \
  cli/app.cpp cli/cli.cpp cli/main.cpp cli/spec_flags.cpp cli/cmd_compile.cpp cli/cmd_show.cpp \
  cli/cmd_validate.cpp serve/*.cpp cli/cmd_serve.cpp)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
run-clang-tidy -quiet -p "$build" -j "${JOBS:-$(nproc)}" $files >"$log" 2>&1 || true
if grep -E '(warning|error):' "$log"; then
  echo "tidy: clang-tidy reported the findings above" >&2
  exit 1
fi
echo "tidy: clean ($(echo $files | wc -w) files through clang-tidy; function length everywhere)"
