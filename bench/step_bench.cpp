// maskc's training step on the shapes of bench/step_bench.py (its plain-PyTorch twin), timed the
// same way: the runtime's MaskedTransformer with a learnable prior M [1, 1, N, N] (+ causal for
// the decoder), the experiments' losses and Adam/AdamW. Prints one JSON line.
//   build/bin/step_bench --size arith-paper --threads 1 --steps 10 [--precision bf16]
//   build/bin/step_bench --size arith-paper --eval   (also: a full arithmetic evaluation of
//       10,000 + 1,000 problems as the experiment runs it, the teacher-forced fast path over full
//       passes and the plain K-pass greedy decode, in steps; and its floor: the fewest
//       multiply-adds an exact evaluation of the 10,000 test problems can do, against the step's
//       and at the best rate of a plain matrix product here, eval_floor_work_steps and
//       eval_floor_steps)
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
#include "runtime/decoder.h"
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

/// Multiply-adds of one position through one block's matrix products: Q, K, V, the output
/// projection and the MLP. Attention's own products (≤ N · H · d_head each) are left out.
double block_macs(const ModelConfig& m) {
  const double inner = static_cast<double>(m.heads * m.head_dim), dim = static_cast<double>(m.dim);
  return 4 * dim * inner + 2 * dim * static_cast<double>(m.mlp);
}

/// How fast this process multiplies float32 (`bf16`: bfloat16) matrices of the model's sizes: the
/// best of a few timed products of [rows, dim] by [dim, 3 · H · d_head] and by [dim, mlp] (the
/// shapes of a training step's projections) and of [4 · rows, dim] by [dim, 3 · H · d_head], in
/// multiply-adds per second.
double gemm_macs_per_s(const ModelConfig& m, int64_t rows, torch::Device device, bool bf16) {
  const auto options =
      torch::TensorOptions().device(device).dtype(bf16 ? torch::kBFloat16 : torch::kFloat);
  double best = 0;
  for (const auto& [factor, cols] : {std::pair<int64_t, int64_t>{1, 3 * m.heads * m.head_dim},
                                     {1, m.mlp},
                                     {4, 3 * m.heads * m.head_dim}}) {
    const auto a = torch::randn({factor * rows, m.dim}, options);
    const auto b = torch::randn({m.dim, cols}, options);
    auto c = torch::mm(a, b);
    const double macs = 4.0 * static_cast<double>(factor * rows * m.dim * cols);  // 4 products
    for (int rep = 0; rep < 7; ++rep) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < 4; ++i) torch::mm_out(c, a, b);
      if (device.is_cuda()) (void)c.sum().item<double>();
      best = std::max(best, macs / seconds_since(start));
    }
  }
  return best;
}

/// Multiply-adds of a causal decoder's pass that computes `positions` (row, position) pairs
/// through every layer but the last, and the last layer's K and V there too, and its Q, output
/// projection, MLP and head at `answer_rows` rows alone. Layer 0's Q, K, V are left out: they are
/// functions of (token, position) alone, which the CPU path gathers from a table for a large
/// batch; so is its output projection if `layer0_output`, since Wo·Σ p V = Σ p (Wo V) could be
/// gathered as well. Needs depth ≥ 2.
double decoder_pass_macs(const ModelConfig& m, double positions, double answer_rows,
                         bool layer0_output) {
  const double inner = static_cast<double>(m.heads * m.head_dim), dim = static_cast<double>(m.dim);
  const double kv = 2 * dim * inner, layer0_gathered = (layer0_output ? 4 : 3) * dim * inner;
  const double per_position =
      static_cast<double>(m.depth - 1) * block_macs(m) - layer0_gathered + kv;
  const double per_answer = block_macs(m) - kv + dim * static_cast<double>(m.vocab);
  return positions * per_position + answer_rows * per_answer;
}

/// The fewest multiply-adds that an exact teacher-forced pass over the problems `ids` [T, N]
/// can do: decoder_pass_macs without layer 0's projections, with one position per distinct prefix
/// (a causal model computes a position once for all rows that agree up to it, the answer rows' last
/// layer too), over positions [0, answer_offset + K − 1) (the last row read predicts c[K−1]). The
/// training sample, the greedy completion of wrong rows and attention's own products are left out:
/// a lower bound.
double eval_floor_macs(const ModelConfig& m, const torch::Tensor& ids, int64_t answer_offset,
                       int64_t answer_digits) {
  const auto tokens = ids.to(torch::kCPU).contiguous();
  const int64_t rows = tokens.size(0), n = tokens.size(1);
  const int64_t end = answer_offset + answer_digits - 1;
  const auto* t = tokens.data_ptr<int64_t>();
  std::vector<uint64_t> key(static_cast<size_t>(rows), 0);  // the prefix ids[r, 0..p] in base vocab
  double prefixes = 0, answer_prefixes = 0;  // of positions [0, end), of the answer rows
  for (int64_t p = 0; p < end; ++p) {
    for (int64_t r = 0; r < rows; ++r) {
      key[r] = key[r] * static_cast<uint64_t>(m.vocab) + static_cast<uint64_t>(t[r * n + p]);
    }
    auto sorted = key;
    std::sort(sorted.begin(), sorted.end());
    const auto distinct =
        static_cast<double>(std::unique(sorted.begin(), sorted.end()) - sorted.begin());
    prefixes += distinct;
    if (p >= answer_offset - 1) answer_prefixes += distinct;
  }
  return decoder_pass_macs(m, prefixes, answer_prefixes, /*layer0_output=*/true);
}

/// Multiply-adds of the arithmetic training step as the CPU path computes it (layer 0's Q, K, V
/// gathered, its output projection not): the pass over positions [0, answer_offset + K − 1) of
/// `batch` rows, and twice that for the backward pass (each product's gradients with respect to
/// its input and its weight).
double arithmetic_step_macs(const ModelConfig& m, int64_t batch, int64_t answer_offset,
                            int64_t answer_digits) {
  const auto rows = static_cast<double>(batch);
  return 3 * decoder_pass_macs(m, rows * static_cast<double>(answer_offset + answer_digits - 1),
                               rows * static_cast<double>(answer_digits),
                               /*layer0_output=*/false);
}

/// Seconds of one full arithmetic evaluation of the addition paper preset (10,000 test problems
/// and a 1,000-problem sample of the training set), three ways: the plain K-pass greedy decode
/// (and a teacher-forced pass for the loss), the teacher-forced fast path over full forward
/// passes (answer_metrics), and what the experiment runs (its evaluate(): the answer-rows pass
/// with shared prefixes and the key/value-cached completion). Each ends in a host read, so GPU
/// time is included.
struct EvalSeconds {
  double plain = 0, fast = 0, experiment = 0;
  double forward = 0;  // one full forward pass over the 11,000 rows
  double plain_cpu = 0, fast_cpu = 0, experiment_cpu = 0, forward_cpu = 0;  // CPU seconds of each
  double floor_macs = 0;  // eval_floor_macs of the 10,000 test problems
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
  EvalSeconds s;
  const auto test_ids = ids.narrow(0, 0, static_cast<int64_t>(split.test.size()));
  s.floor_macs = eval_floor_macs(model->config(), test_ids, offset, digits);
  const LogitsFn forward = [&](const torch::Tensor& t) { return model->forward(t); };
  const Autocast autocast(device, bf16);  // as the trainer evaluates
  std::tie(s.plain, s.plain_cpu) = timed([&] {
    torch::NoGradGuard no_grad;
    for (int64_t first = 0; first < ids.size(0); first += kEvalRows) {
      const auto chunk = ids.narrow(0, first, std::min(kEvalRows, ids.size(0) - first));
      (void)answer_loss(forward(chunk), chunk.narrow(1, offset, digits), offset).item<double>();
      (void)greedy_decode(forward, chunk, offset, digits).sum().item<int64_t>();
    }
  });
  std::tie(s.fast, s.fast_cpu) =
      timed([&] { (void)answer_metrics(Decoder{forward}, ids, offset, digits); });
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
    // The floor in steps: the least work of an exact evaluation at the best rate of a plain
    // matrix product, against this step; the step's own count shows how near that rate it runs.
    const auto& m = bench.size.model;
    const int64_t offset = bench.task.answer_offset(), digits = bench.task.answer_digits;
    const double rate =
        gemm_macs_per_s(m, kBatch * (offset + digits - 1), bench.device, bench.bf16);
    const double step_macs = arithmetic_step_macs(m, kBatch, offset, digits);
    extra += fmt::format(
        R"(, "gemm_gmacs_per_s": {:.1f}, "step_gmacs": {:.2f}, "step_gmacs_per_s": {:.1f}, )"
        R"("eval_floor_gmacs": {:.1f}, "eval_floor_work_steps": {:.2f}, "eval_floor_s": {:.3f}, )"
        R"("eval_floor_steps": {:.2f})",
        rate / 1e9, step_macs / 1e9, step_macs / step_s / 1e9, e.floor_macs / 1e9,
        e.floor_macs / step_macs, e.floor_macs / rate, e.floor_macs / rate / step_s);
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
