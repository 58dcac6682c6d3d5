// maskc's training step on the shapes of bench/step_bench.py (its plain-PyTorch twin), timed the
// same way: the runtime's MaskedTransformer with a learnable prior M [1, 1, N, N] (+ causal for
// the decoder), the experiments' losses and Adam/AdamW. Prints one JSON line.
//   build/bin/step_bench --size arith-paper --threads 1 --steps 10 [--precision bf16]
//   build/bin/step_bench --size arith-paper --eval   (also: a full arithmetic evaluation of
//       10,000 + 1,000 problems as the experiment runs it, the teacher-forced fast path over full
//       passes and the plain K-pass greedy decode, in steps)
#include <fmt/format.h>
#include <torch/torch.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/arithmetic_experiment.h"
#include "runtime/autocast.h"
#include "runtime/host.h"
#include "runtime/model.h"
#include "tasks/arithmetic_task.h"

namespace maskprior::runtime {
namespace {

struct Size {
  ModelConfig model;
  bool adamw = false;
};

// The table of bench/step_bench.py (train/presets.cpp).
Size size_named(const std::string& name) {
  Size s;
  auto& m = s.model;
  m.vocab = 3;
  m.seq_len = 16;
  m.readout = Readout::kClsRegression;
  if (name == "gotu-quick") {
    m.dim = 64, m.depth = 2, m.heads = 2, m.head_dim = 16, m.mlp = 64;
  } else if (name == "gotu-paper") {
    m.dim = 256, m.depth = 12, m.heads = 6, m.head_dim = 64, m.mlp = 256;
  } else if (name == "arith-paper") {
    const auto task = tasks::make_arithmetic_task("addition");
    m.vocab = tasks::kArithmeticVocab;
    m.seq_len = task.sequence_length();
    m.dim = 256, m.depth = 6, m.heads = 4, m.head_dim = 64, m.mlp = 256;
    m.readout = Readout::kCausalLm;
    s.adamw = true;
  } else {
    throw std::invalid_argument("unknown --size " + name);
  }
  return s;
}

constexpr double kLr = 1e-3, kWeightDecay = 1e-3;
constexpr int64_t kBatch = 256, kTrainRows = 4096;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// CPU seconds of the whole process (all threads): less moved by other processes than wall time.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

struct Bench {
  Bench(const Size& s, torch::Device d) : size(s), device(d), model(s.model) {
    torch::manual_seed(0);
    const auto n = s.model.seq_len;
    model->set_mask(torch::randn({1, 1, n, n}), /*learnable=*/true);
    model->to(device);
    if (s.adamw) {
      optimizer = std::make_unique<torch::optim::AdamW>(
          model->parameters(), torch::optim::AdamWOptions(kLr).weight_decay(kWeightDecay));
    } else {
      optimizer = std::make_unique<torch::optim::Adam>(
          model->parameters(), torch::optim::AdamOptions(kLr).weight_decay(kWeightDecay));
    }
    ids = torch::randint(0, s.model.vocab, {kTrainRows, n}, torch::kLong).to(device);
    targets = torch::randn({kTrainRows}).to(device);
    model->train();
  }

  torch::Tensor step() {
    auto rows = torch::randint(0, kTrainRows, {kBatch}, torch::kLong).to(device);
    auto inputs = ids.index_select(0, rows);
    torch::Tensor loss;  // as the experiments' train_loss computes it (train/train.cpp)
    {
      const Autocast autocast(device, bf16);
      if (size.model.readout == Readout::kCausalLm) {
        loss = answer_rows_loss(model, inputs,
                                inputs.narrow(1, task.answer_offset(), task.answer_digits),
                                task.answer_offset());
      } else {
        loss = torch::mse_loss(model->forward(inputs), targets.index_select(0, rows));
      }
    }
    clear_gradients(*model);
    loss.backward();
    optimizer->step();
    if (device.is_cuda()) (void)loss.item<double>();  // wait for the GPU: time the whole step
    return loss.detach();
  }

  Size size;
  torch::Device device;
  bool bf16 = false;  // --precision bf16
  tasks::ArithmeticTask task = tasks::make_arithmetic_task("addition");
  MaskedTransformer model;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  torch::Tensor ids, targets;
};

/// Seconds of one full arithmetic evaluation of the addition paper preset (10,000 test problems
/// and a 1,000-problem sample of the training set), three ways: the plain K-pass greedy decode
/// (and a teacher-forced pass for the loss), the teacher-forced fast path over full forward
/// passes (arithmetic_metrics), and what the experiment runs (its evaluate(): the answer-rows pass
/// with shared prefixes and the key/value-cached completion). Each ends in a host read, so GPU
/// time is included.
struct EvalSeconds {
  double plain = 0, fast = 0, experiment = 0;
  double forward = 0;  // one full forward pass over the 11,000 rows
  double plain_cpu = 0, fast_cpu = 0, experiment_cpu = 0, forward_cpu = 0;  // CPU seconds of each
};

/// Wall and CPU seconds of `work`.
template <typename Work>
std::pair<double, double> timed(Work work) {
  const auto start = std::chrono::steady_clock::now();
  const double cpu = cpu_seconds();
  work();
  return {seconds_since(start), cpu_seconds() - cpu};
}

EvalSeconds eval_seconds(MaskedTransformer& model, bool bf16) {
  const auto task = tasks::make_arithmetic_task("addition");
  const int64_t offset = task.answer_offset(), digits = task.answer_digits;
  ExperimentConfig config;  // the paper preset's data: train fraction 0.4%, 10,000 test problems
  config.task = "addition";
  const auto experiment = make_arithmetic_experiment(config);
  const auto split = tasks::split_problems(task, config.train_fraction, config.test_size, 0);
  auto problems = split.test;
  for (int64_t i = 0; i < 1000; ++i) {
    problems.push_back(split.train[static_cast<size_t>(i) * split.train.size() / 1000]);
  }
  const auto device = model->position_embedding().device();
  const auto ids = arithmetic_ids(task, problems).to(device);
  experiment->to(device);
  model->eval();
  const LogitsFn forward = [&](const torch::Tensor& t) { return model->forward(t); };
  const Autocast autocast(device, bf16);  // as the trainer evaluates
  EvalSeconds s;
  std::tie(s.plain, s.plain_cpu) = timed([&] {
    torch::NoGradGuard no_grad;
    for (int64_t first = 0; first < ids.size(0); first += kEvalRows) {
      const auto chunk = ids.narrow(0, first, std::min(kEvalRows, ids.size(0) - first));
      (void)answer_loss(forward(chunk), chunk.narrow(1, offset, digits), offset).item<double>();
      (void)greedy_decode(forward, chunk, offset, digits).sum().item<int64_t>();
    }
  });
  std::tie(s.fast, s.fast_cpu) =
      timed([&] { (void)arithmetic_metrics(forward, ids, offset, digits); });
  std::tie(s.experiment, s.experiment_cpu) = timed([&] { (void)experiment->evaluate(model); });
  std::tie(s.forward, s.forward_cpu) = timed([&] {
    torch::NoGradGuard no_grad;
    for (int64_t first = 0; first < ids.size(0); first += kEvalRows) {
      const auto chunk = ids.narrow(0, first, std::min(kEvalRows, ids.size(0) - first));
      (void)forward(chunk).sum().item<double>();
    }
  });
  model->train();
  return s;
}

int run(int argc, char** argv) {
  std::map<std::string, std::string> args = {{"--size", "arith-paper"}, {"--threads", "1"},
                                             {"--steps", "10"},         {"--warmup", "2"},
                                             {"--device", "cpu"},       {"--precision", "fp32"}};
  bool eval = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--eval") {
      eval = true;
    } else if (args.contains(a) && i + 1 < argc) {
      args[a] = argv[++i];
    } else {
      std::cerr << "usage: step_bench [--size S] [--threads T] [--steps K] [--warmup W] "
                   "[--device cpu|cuda] [--precision fp32|bf16] [--eval]\n";
      return 2;
    }
  }
  const int threads = std::stoi(args["--threads"]);
  maskprior::runtime::prepare_host(threads);
  const auto construct_start = std::chrono::steady_clock::now();
  Bench bench(size_named(args["--size"]), torch::Device(args["--device"]));
  bench.bf16 = args["--precision"] == "bf16";
  const double construct_s = seconds_since(construct_start);
  const int64_t warmup = std::stoll(args["--warmup"]), steps = std::stoll(args["--steps"]);
  for (int64_t i = 0; i < warmup; ++i) bench.step();
  std::vector<double> times, cpu;
  for (int64_t i = 0; i < steps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const double start_cpu = cpu_seconds();
    bench.step();
    times.push_back(seconds_since(start));
    cpu.push_back(cpu_seconds() - start_cpu);
  }
  const double step_s = median(times), step_cpu = median(cpu);
  std::string extra;
  if (eval && bench.size.model.readout == Readout::kCausalLm) {
    const auto e = eval_seconds(bench.model, bench.bf16);
    extra = fmt::format(
        R"(, "eval_plain_s": {:.3f}, "eval_fast_s": {:.3f}, "eval_experiment_s": {:.3f}, )"
        R"("eval_forward_s": {:.3f}, "eval_plain_steps": {:.2f}, "eval_fast_steps": {:.2f}, )"
        R"("eval_experiment_steps": {:.2f}, "eval_forward_steps": {:.2f}, "eval_cpu_steps": )"
        R"({{"plain": {:.2f}, "fast": {:.2f}, "experiment": {:.2f}, "forward": {:.2f}}})",
        e.plain, e.fast, e.experiment, e.forward, e.plain / step_s, e.fast / step_s,
        e.experiment / step_s, e.forward / step_s, e.plain_cpu / step_cpu, e.fast_cpu / step_cpu,
        e.experiment_cpu / step_cpu, e.forward_cpu / step_cpu);
  }
  std::cout
      << fmt::format(
             R"({{"impl": "maskc", "size": "{}", "device": "{}", "precision": "{}", )"
             R"("threads": {}, "blas_threads": {}, )"
             R"("blas_core": "{}", "steps": {}, )"
             R"("construct_s": {:.4f}, "median_step_s": {:.6f}, "median_step_cpu_s": {:.6f}, )"
             R"("steps_per_s": {:.4f}{}}})",
             args["--size"], args["--device"], args["--precision"], torch::get_num_threads(),
             blas_threads(), maskprior::runtime::blas_core(), steps, construct_s, step_s, step_cpu,
             1.0 / step_s, extra)
      << std::endl;
  return 0;
}

}  // namespace
}  // namespace maskprior::runtime

int main(int argc, char** argv) {
  return maskprior::runtime::run(argc, argv);
}
