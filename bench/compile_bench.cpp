// How fast is the compiler next to the memory it must write anyway? A `local` prior on a 128x128
// grid has N = 16,384 tokens, so its float32 mask alone is 1 GiB. `ratio_to_fill` is the compile
// time over the time to allocate and fill one such buffer, measured alternately in the same
// process, so the number means the same on any machine. /0: the mask alone, as `maskc validate`
// and `report` compile a spec (CompileOptions::provenance = false), ~1 means at the speed of a
// fill; /1: mask + provenance (2 GiB), as `maskc compile` saves it, ~1 means both arrays at the
// speed of one fill, ~2 one after the other.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/compile.h"

namespace maskprior {
namespace {

constexpr int64_t kSide = 128;
constexpr int64_t kTokens = kSide * kSide;
constexpr size_t kCells = static_cast<size_t>(kTokens) * kTokens;  // one (layer, head)
constexpr float kClose = -10.0f;

constexpr char kLocalSpec[] = R"(mask local128
param side = 128
tokens p[side * side]
grid p side x side
default close
open local p radius 1
)";

// The example of docs/language-reference.md: the per-compile overhead of a tiny spec.
constexpr char kParity2Spec[] = R"(mask parity2
param n = 15
tokens cls, x[n]
scale open = 10, close = -10
default close
open diagonal
open cls -> x[0], x[1]
open pair x[0], x[1]
)";

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Allocates and fills a float buffer of the mask's size: the floor for writing the mask.
double fill_seconds() {
  const auto start = std::chrono::steady_clock::now();
  std::vector<float> buffer(kCells, kClose);
  benchmark::DoNotOptimize(buffer.data());
  benchmark::ClobberMemory();
  return seconds_since(start);
}

void BM_FillBuffer(benchmark::State& state) {
  for (auto _ : state) state.SetIterationTime(fill_seconds());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kCells * sizeof(float)));
}

void BM_CompileLocal128(benchmark::State& state) {
  CompileOptions options;
  options.provenance = state.range(0) != 0;
  // A fill just before each compile: both see the same machine load, which moves a lot on a
  // shared machine; the ratio is of the sums.
  double fill = 0, compile = 0;
  for (auto _ : state) {
    fill += fill_seconds();
    const auto start = std::chrono::steady_clock::now();
    const CompiledMask mask = compile_source(kLocalSpec, "local128.mask", options);
    const double elapsed = seconds_since(start);  // freeing the result is not timed
    benchmark::DoNotOptimize(mask.mask.data());
    state.SetIterationTime(elapsed);
    compile += elapsed;
  }
  const auto iterations = static_cast<double>(state.iterations());
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double output =
      static_cast<double>(kCells * (sizeof(float) + (options.provenance ? sizeof(int32_t) : 0)));
  state.counters["fill_s"] = fill / iterations;
  state.counters["ratio_to_fill"] = compile / fill;
  // Peak resident memory of the process over the output: ~1 is no copy (the process's peak, so
  // /0 runs first).
  state.counters["peak_over_output"] = static_cast<double>(usage.ru_maxrss) * 1024.0 / output;
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kCells * sizeof(float)));
}

void BM_CompileParity2(benchmark::State& state) {
  for (auto _ : state) {
    const CompiledMask mask = compile_source(kParity2Spec, "parity2.mask");
    benchmark::DoNotOptimize(mask.mask.data());
  }
}

BENCHMARK(BM_FillBuffer)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);
BENCHMARK(BM_CompileLocal128)
    ->ArgName("provenance")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->Iterations(5);
BENCHMARK(BM_CompileParity2)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace maskprior

BENCHMARK_MAIN();
