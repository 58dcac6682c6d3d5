// Data-parallel throughput: the same training run (the same global batch, so the same steps) as
// one process with one thread and as two processes (`maskc launch --nproc 2`) with one thread
// each. Reports each one's training steps per second (from summary.json: steps / wall_seconds of
// the training loop, rank 0's evaluations included) and `speedup` = two / one, which means the
// same on any machine with two free cores (on a busy machine it says how busy). docs/distributed.md
// has the measured numbers. Run: build/bin/dp_bench
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace maskprior {
namespace {

constexpr const char* kRun =
    "train --task parity2 --spec " MASKPRIOR_SOURCE_DIR
    "/specs/gotu/parity2.mask --init mask --n 10 --dim 64 --depth 2 --heads 2 --head-dim 16 "
    "--mlp 64 --epochs 8 --batch-size 256 --threads 1 --device cpu -q";

/// Trains with `prefix` (empty: one process) into `dir`; steps per second of the training loop.
double steps_per_second(const std::string& prefix, const std::filesystem::path& dir) {
  std::filesystem::remove_all(dir);
  const std::string command =
      fmt::format("{} {} {} --out {}", MASKC_PATH, prefix, kRun, dir.string());
  if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
  std::ifstream in(dir / "summary.json");
  const auto summary = nlohmann::json::parse(in);
  return summary.at("steps").get<double>() / summary.at("wall_seconds").get<double>();
}

void BM_DataParallelSpeedup(benchmark::State& state) {
  char pattern[] = "/tmp/dp_bench.XXXXXX";
  if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
  const std::filesystem::path root(pattern);
  double one = 0, two = 0;
  for (auto _ : state) {
    one = steps_per_second("", root / "one");
    two = steps_per_second("launch --nproc 2 --", root / "two");
  }
  std::filesystem::remove_all(root);
  state.counters["one_process_steps_per_s"] = one;
  state.counters["two_processes_steps_per_s"] = two;
  state.counters["speedup"] = two / one;
}
BENCHMARK(BM_DataParallelSpeedup)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace
}  // namespace maskprior

BENCHMARK_MAIN();
