// Evaluation at long sizes (issue #48, item 6): the runtime's causal decoder with a fixed prior of
// one size (as a run over several sizes holds one per size) evaluated on `--problems` addition
// problems of `--digits` digits as the experiments do (runtime/decoder.h: cached_decoder, passes
// cut to memory, then the completion of the wrong rows, here every row: an untrained model),
// against the floor of the same matrix work: the pass's products alone (projections, QKᵀ and PV
// per head over the whole sequence, output projection, MLP), as plain batched products of the
// same shapes and rows per pass, with no softmax, bias, LayerNorm, gathers or completion. Prints
// one JSON line with both times, their ratio and the process's peak memory.
//   build/bin/length_bench --digits 100 --problems 1000 --threads 1
//   build/bin/length_bench --digits 1000 --problems 100 --threads 1
#include <fmt/format.h>
#include <sys/resource.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "runtime/decoder.h"
#include "runtime/model.h"
#include "tasks/arithmetic_task.h"

namespace maskprior::runtime {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double peak_gib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / (1024.0 * 1024.0);  // KiB → GiB
}

/// Seconds of the floor: the pass's products alone, in passes of the rows cached_decoder takes.
double floor_seconds(const ModelConfig& m, int64_t problems, int64_t t) {
  const double per_row = 8.0 * static_cast<double>(m.heads) * static_cast<double>(t * t);
  const int64_t rows = std::max<int64_t>(1, static_cast<int64_t>(kPassAttentionBytes / per_row));
  const int64_t inner = m.heads * m.head_dim;
  const auto wqkv = torch::randn({m.dim, 3 * inner}), wo = torch::randn({inner, m.dim});
  const auto w1 = torch::randn({m.dim, m.mlp}), w2 = torch::randn({m.mlp, m.dim});
  const auto start = std::chrono::steady_clock::now();
  for (int64_t first = 0; first < problems; first += rows) {
    const int64_t b = std::min(rows, problems - first);
    auto x = torch::randn({b * t, m.dim});
    for (int64_t l = 0; l < m.depth; ++l) {
      const auto qkv = torch::mm(x, wqkv).view({b, t, 3, m.heads, m.head_dim});
      auto heads = [&](int64_t i) {
        return qkv.select(2, i).transpose(1, 2).reshape({b * m.heads, t, m.head_dim});
      };
      const auto scores = torch::bmm(heads(0), heads(1).transpose(1, 2));
      const auto mixed =
          torch::bmm(scores, heads(2)).view({b, m.heads, t, m.head_dim}).transpose(1, 2);
      x = torch::mm(mixed.reshape({b * t, inner}), wo);
      x = torch::mm(torch::mm(x, w1), w2);
    }
  }
  return seconds_since(start);
}

int run(int argc, char** argv) {
  int64_t digits = 100, problems = 1000, threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int64_t value = std::atoll(argv[i + 1]);
    if (flag == "--digits")
      digits = value;
    else if (flag == "--problems")
      problems = value;
    else if (flag == "--threads")
      threads = value;
    else
      throw std::invalid_argument("unknown flag " + flag);
  }
  torch::set_num_threads(static_cast<int>(threads));
  torch::manual_seed(0);
  auto task = tasks::make_arithmetic_task("addition", static_cast<int>(digits));
  const int64_t t = task.sequence_length();
  // The quick preset's model (train/presets.cpp), positions from the prior alone.
  ModelConfig m;
  m.vocab = tasks::kArithmeticVocab;
  m.seq_len = t;
  m.dim = 64, m.depth = 2, m.heads = 4, m.head_dim = 16, m.mlp = 256;
  m.readout = Readout::kCausalLm;
  m.position = PositionEmbedding::kNone;
  MaskedTransformer model(m);
  model->eval();
  SizedPrior prior;
  prior.values = (torch::rand({1, m.heads, t, t}) < 0.05).to(torch::kFloat) * 10 - 5;  // ±5
  prior.hard = torch::ones({t, t}, torch::kBool).triu(1);
  model->set_sized_priors({{t, prior}}, 0, /*learnable=*/false);
  const auto split = tasks::sample_digit_problems(task, 0, problems, 1);
  std::vector<int64_t> tokens;
  for (const auto& p : split.test) {
    const auto row = tasks::encode_digits(task, p);
    tokens.insert(tokens.end(), row.begin(), row.end());
  }
  const auto ids = torch::tensor(tokens, torch::kLong).view({problems, t});
  const int64_t offset = task.answer_offset(), answer = task.answer_digits;
  const double before = peak_gib();
  torch::NoGradGuard no_grad;

  const auto decoder = cached_decoder(model, offset, answer);
  auto start = std::chrono::steady_clock::now();
  (void)decoder.forward(ids);
  const double pass_s = seconds_since(start);
  start = std::chrono::steady_clock::now();
  const auto metrics = answer_metrics(decoder, ids, offset, answer);
  const double eval_s = seconds_since(start);
  const double peak = peak_gib();

  const double floor_s = floor_seconds(m, problems, t);
  const int64_t rows = std::max<int64_t>(
      1, static_cast<int64_t>(kPassAttentionBytes / (8.0 * static_cast<double>(m.heads * t * t))));
  std::cout
      << fmt::format(
             R"({{"digits": {}, "tokens": {}, "problems": {}, "threads": {}, )"
             R"("rows_per_pass": {}, "pass_s": {:.3f}, "eval_s": {:.3f}, "floor_s": {:.3f}, )"
             R"("pass_over_floor": {:.2f}, "eval_over_floor": {:.2f}, )"
             R"("sequence_accuracy": {:.3f}, "peak_gib_before": {:.2f}, "peak_gib": {:.2f}}})",
             digits, t, problems, threads, rows, pass_s, eval_s, floor_s, pass_s / floor_s,
             eval_s / floor_s, metrics["sequence_accuracy"].get<double>(), before, peak)
      << std::endl;
  return 0;
}

}  // namespace
}  // namespace maskprior::runtime

int main(int argc, char** argv) {
  try {
    return maskprior::runtime::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "length_bench: " << e.what() << "\n";
    return 2;
  }
}
