// Data-parallel throughput: the same training run (the same global batch, so the same steps) as
// one process with one thread and as two processes (`maskc launch --nproc 2`) with one thread
// each. Reports each one's training steps per second (from summary.json: steps / wall_seconds of
// the training loop, rank 0's evaluation included), `speedup` = two / one (meaningful on a machine
// with two idle cores; on a busy one two processes also win a larger share of the CPU), and
// `cpu_ratio`: the CPU seconds of all the two processes over the one's (start-up included), the
// overhead of splitting and reducing. docs/distributed.md has measured numbers.
// Run: build/bin/dp_bench
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "runfolder/run_files.h"

namespace maskprior {
namespace {

constexpr const char* kRun =
    "train --task parity2 --spec " MASKPRIOR_SOURCE_DIR
    "/specs/gotu/parity2.mask --init mask --n 12 --dim 64 --depth 2 --heads 2 --head-dim 16 "
    "--mlp 64 --epochs 30 --batch-size 256 --eval-every 1000000 --threads 1 --device cpu -q";

struct Measured {
  double steps_per_second = 0;
  double cpu_seconds = 0;  // user + system of every process of the run (all ranks, start-up too)
};

double children_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

/// Trains with `prefix` (empty: one process) into `dir`: steps per second of the training loop
/// and the CPU time all its processes used.
Measured measure(const std::string& prefix, const std::filesystem::path& dir) {
  std::filesystem::remove_all(dir);
  const double cpu_before = children_cpu_seconds();
  const std::string command =
      fmt::format("{} {} {} --out {}", MASKC_PATH, prefix, kRun, dir.string());
  if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
  std::ifstream in(dir / maskprior::runfolder::kSummaryFile);
  const auto summary = nlohmann::json::parse(in);
  return {summary.at("steps").get<double>() / summary.at("wall_seconds").get<double>(),
          children_cpu_seconds() - cpu_before};
}

void BM_DataParallelSpeedup(benchmark::State& state) {
  char pattern[] = "/tmp/dp_bench.XXXXXX";
  if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
  const std::filesystem::path root(pattern);
  Measured one, two;
  for (auto _ : state) {
    one = measure("", root / "one");
    two = measure("launch --nproc 2 --", root / "two");
  }
  std::filesystem::remove_all(root);
  state.counters["one_process_steps_per_s"] = one.steps_per_second;
  state.counters["two_processes_steps_per_s"] = two.steps_per_second;
  state.counters["speedup"] = two.steps_per_second / one.steps_per_second;
  // CPU time of the two processes over the one's for the same steps: the cost of the split and
  // the reductions, which a busy machine does not distort as it does wall time.
  state.counters["cpu_ratio"] = two.cpu_seconds / one.cpu_seconds;
}
BENCHMARK(BM_DataParallelSpeedup)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace
}  // namespace maskprior

BENCHMARK_MAIN();
