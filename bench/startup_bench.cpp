// What does one `maskc compile` cost as a whole process? The work of compiling a 16x16 spec is
// microseconds, so the process is start-up: loading the executable and its libraries. The
// benchmark runs `maskc compile specs/gotu/parity2.mask` and a trivial process (/bin/true) in
// turn and reports `ratio_to_trivial` (wall time of maskc over /bin/true, measured in the same
// loop, so it means the same on any machine) and `peak_rss_mib` (maskc's peak resident memory).
// Target (docs/performance.md, section 7): <= 50 ms wall and <= 40 MiB. Run: build/bin/startup_bench
#include <benchmark/benchmark.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace maskprior {
namespace {

struct ProcessCost {
  double seconds = 0;
  double peak_rss_mib = 0;
};

/// Runs `argv` to completion; its wall time and peak resident memory (from wait4's rusage).
ProcessCost run_process(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
    throw std::runtime_error("cannot start " + args[0]);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  const auto end = std::chrono::steady_clock::now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(args[0] + " failed");
  }
  return {std::chrono::duration<double>(end - start).count(),
          static_cast<double>(usage.ru_maxrss) / 1024.0};
}

void BM_MaskcCompileParity2(benchmark::State& state) {
  const std::string out = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                          "/maskprior_startup_bench.safetensors";
  double maskc_seconds = 0, trivial_seconds = 0, peak = 0;
  for (auto _ : state) {
    const auto maskc = run_process(
        {MASKC_PATH, "compile", MASKPRIOR_SOURCE_DIR "/specs/gotu/parity2.mask", "-o", out});
    state.SetIterationTime(maskc.seconds);
    maskc_seconds += maskc.seconds;
    peak = std::max(peak, maskc.peak_rss_mib);
    trivial_seconds += run_process({"/bin/true"}).seconds;
  }
  std::remove(out.c_str());
  state.counters["ratio_to_trivial"] = maskc_seconds / trivial_seconds;
  state.counters["peak_rss_mib"] = peak;
  state.counters["wall_ms"] = 1e3 * maskc_seconds / static_cast<double>(state.iterations());
}
BENCHMARK(BM_MaskcCompileParity2)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(50);

}  // namespace
}  // namespace maskprior

BENCHMARK_MAIN();
