#include "runtime/arithmetic_experiment.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "core/error.h"
#include "tasks/random.h"

namespace maskprior::runtime {

namespace {

inline constexpr int64_t kTrainEvalRows = 1000;  // training problems re-decoded at each evaluation
inline constexpr uint64_t kProbeSeed = 0xa7'1d'5eedULL;  // fixed: every run probes alike

class ArithmeticExperiment : public Experiment {
 public:
  explicit ArithmeticExperiment(const ExperimentConfig& config)
      : task_(tasks::make_arithmetic_task(config.task)) {
    const auto split =
        tasks::split_problems(task_, config.train_fraction, config.test_size, config.seed);
    if (split.test.empty()) {
      throw InputError(fmt::format(
          "{}: no test problem left (train fraction {}, test size {}); lower --train-fraction or "
          "raise --test-size",
          config.task, config.train_fraction, config.test_size));
    }
    train_ids_ = arithmetic_ids(task_, split.train);
    test_ids_ = arithmetic_ids(task_, split.test);
    // An evenly spaced sample of the (sorted) training problems: how well the model fits what it
    // saw.
    const int64_t rows = train_ids_.size(0);
    const int64_t sample = std::min(kTrainEvalRows, rows);
    auto picked = (torch::arange(sample, torch::kLong) * rows).div(sample, "floor");
    train_eval_ids_ = train_ids_.index_select(0, picked);
  }

  Layout layout() const override { return task_.layout(); }

  ModelConfig model_config(const ExperimentConfig& config) const override {
    return sized_model_config(config, tasks::kArithmeticVocab, task_.sequence_length(),
                              Readout::kCausalLm);
  }

  int64_t train_size() const override { return train_ids_.size(0); }

  Batch train_batch(const torch::Tensor& rows) const override {
    auto inputs = train_ids_.index_select(0, rows.to(train_ids_.device()));
    auto answers = inputs.narrow(1, task_.answer_offset(), task_.answer_digits).contiguous();
    return {inputs, answers};
  }

  torch::Tensor loss(const torch::Tensor& output, const Batch& batch) const override {
    return answer_loss(output, batch.targets, task_.answer_offset());
  }

  torch::Tensor train_loss(MaskedTransformer& model, const Batch& batch) const override {
    return answer_rows_loss(model, batch.inputs, batch.targets, task_.answer_offset());
  }

  nlohmann::json evaluate(MaskedTransformer& model) const override {
    auto metrics = decoder_metrics(model, test_ids_, train_eval_ids_, task_.answer_offset(),
                                   task_.answer_digits);
    metrics["test_size"] = test_ids_.size(0);
    metrics["train_size"] = train_ids_.size(0);
    return metrics;
  }

  torch::Tensor probe_inputs(int64_t size) const override {
    std::mt19937_64 engine(kProbeSeed);
    std::vector<int64_t> problems(static_cast<size_t>(size));
    for (auto& p : problems) {
      p = static_cast<int64_t>(
          tasks::uniform_below(engine, static_cast<uint64_t>(task_.problems())));
    }
    return arithmetic_ids(task_, problems);
  }

  void to(torch::Device device) override {
    for (auto* t : {&train_ids_, &test_ids_, &train_eval_ids_}) *t = t->to(device);
  }

 private:
  tasks::ArithmeticTask task_;
  torch::Tensor train_ids_, test_ids_, train_eval_ids_;
};

}  // namespace

torch::Tensor arithmetic_ids(const tasks::ArithmeticTask& task,
                             const std::vector<int64_t>& problems) {
  const int64_t n = task.sequence_length();
  std::vector<int64_t> tokens;
  tokens.reserve(problems.size() * static_cast<size_t>(n));
  for (int64_t p : problems) {
    if (p < 0 || p >= task.problems()) {
      throw InputError(
          fmt::format("[arithmetic_ids] problem {} is outside [0, {})", p, task.problems()));
    }
    const auto sequence = task.encode(p);
    tokens.insert(tokens.end(), sequence.begin(), sequence.end());
  }
  return torch::tensor(tokens, torch::kLong).view({static_cast<int64_t>(problems.size()), n});
}

torch::Tensor answer_loss(const torch::Tensor& logits, const torch::Tensor& answers,
                          int64_t answer_offset) {
  const int64_t digits = answers.size(1);
  auto rows = logits.narrow(1, answer_offset - 1, digits);  // [B, K, V]: rows that predict c[j]
  return torch::nn::functional::cross_entropy(rows.reshape({-1, rows.size(-1)}),
                                              answers.reshape({-1}));
}

torch::Tensor answer_rows_loss(MaskedTransformer& model, const torch::Tensor& ids,
                               const torch::Tensor& answers, int64_t answer_offset) {
  // Rows answer_offset − 1 .. answer_offset + K − 2: in their logits, c[j] is row j.
  const auto logits = model->forward(ids, {answer_offset - 1, answers.size(1)});
  return answer_loss(logits, answers, 1);
}

torch::Tensor greedy_decode(const LogitsFn& forward, const torch::Tensor& ids,
                            int64_t answer_offset, int64_t answer_digits) {
  torch::NoGradGuard no_grad;
  auto sequences = ids.clone();
  sequences.narrow(1, answer_offset, answer_digits).fill_(0);  // nothing of the answer leaks in
  for (int64_t j = 0; j < answer_digits; ++j) {
    auto next = forward(sequences).select(1, answer_offset - 1 + j).argmax(-1);  // [B]
    sequences.select(1, answer_offset + j).copy_(next);
  }
  return sequences.narrow(1, answer_offset, answer_digits);
}

torch::Tensor greedy_decode_teacher_forced(const LogitsFn& forward, const torch::Tensor& ids,
                                           int64_t answer_offset, int64_t answer_digits,
                                           torch::Tensor* teacher_logits,
                                           const CompleteFn* complete) {
  return greedy_decode_teacher_forced(Decoder{forward, 0, complete ? *complete : CompleteFn()}, ids,
                                      answer_offset, answer_digits, teacher_logits);
}

torch::Tensor greedy_decode_teacher_forced(const Decoder& decoder, const torch::Tensor& ids,
                                           int64_t answer_offset, int64_t answer_digits,
                                           torch::Tensor* teacher_logits) {
  torch::NoGradGuard no_grad;
  const auto logits = decoder.forward(ids);
  if (teacher_logits) *teacher_logits = logits;
  const int64_t row = answer_offset - 1 - decoder.first;  // of logits, predicting c[0]
  const auto answers = ids.narrow(1, answer_offset, answer_digits);
  auto decoded = logits.narrow(1, row, answer_digits).argmax(-1);  // [B, K]
  const auto wrong = decoded != answers;
  // first[b]: the first wrong digit of row b (K where the row is right).
  const auto first =
      torch::where(wrong.any(1), wrong.to(torch::kByte).argmax(1),
                   torch::full_like(wrong.select(1, 0), answer_digits, torch::kLong));
  const auto rows = first.lt(answer_digits - 1).nonzero().squeeze(1);  // digits left to decode
  if (rows.numel() == 0) return decoded;
  // The rows to decode again: the true answer before `first`, the wrong digit at `first`.
  auto sequences = ids.index_select(0, rows);
  const auto row_first = first.index_select(0, rows).unsqueeze(1);  // [R, 1]
  const auto digit = torch::arange(answer_digits, first.options()).unsqueeze(0);
  sequences.narrow(1, answer_offset, answer_digits)
      .copy_(torch::where(digit.le(row_first), decoded.index_select(0, rows),
                          torch::zeros_like(row_first)));
  if (decoder.complete) {
    const auto done = decoder.complete(sequences, rows, row_first.squeeze(1) + answer_offset,
                                       answer_offset + answer_digits - 1);
    decoded.index_copy_(0, rows, done.narrow(1, answer_offset, answer_digits));
    return decoded;
  }
  const int64_t start = row_first.min().item<int64_t>() + 1;
  for (int64_t j = start; j < answer_digits; ++j) {
    const auto active = row_first.squeeze(1).lt(j).nonzero().squeeze(1);  // row_first < j
    const auto next =
        decoder.forward(sequences.index_select(0, active)).select(1, row + j).argmax(-1);
    sequences.select(1, answer_offset + j).index_copy_(0, active, next);
  }
  decoded.index_copy_(0, rows, sequences.narrow(1, answer_offset, answer_digits));
  return decoded;
}

nlohmann::json arithmetic_metrics(const Decoder& decoder, const torch::Tensor& ids,
                                  int64_t answer_offset, int64_t answer_digits, bool digits) {
  torch::NoGradGuard no_grad;
  const int64_t rows = ids.size(0);
  if (rows == 0) throw InternalError("arithmetic_metrics: no sequences");
  auto loss_sum =
      torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(ids.device()));
  auto sequences_right = torch::zeros({}, ids.options().dtype(torch::kLong));
  auto digits_right = torch::zeros_like(sequences_right);
  const int64_t row = answer_offset - decoder.first;  // answer_loss's offset into the logits
  for (int64_t start = 0; start < rows; start += kEvalRows) {
    const auto chunk = ids.narrow(0, start, std::min(kEvalRows, rows - start));
    const auto answers = chunk.narrow(1, answer_offset, answer_digits);
    torch::Tensor logits, decoded;
    if (digits) {
      decoded = greedy_decode_teacher_forced(decoder, chunk, answer_offset, answer_digits, &logits);
    } else {
      logits = decoder.forward(chunk);
      decoded = logits.narrow(1, row - 1, answer_digits).argmax(-1);
    }
    loss_sum +=
        answer_loss(logits, answers, row).to(torch::kDouble) * static_cast<double>(chunk.size(0));
    const auto right = decoded == answers;
    sequences_right += right.all(1).sum();
    digits_right += right.sum();
  }
  const auto total = static_cast<double>(rows);
  nlohmann::json metrics = {
      {"sequence_accuracy", static_cast<double>(sequences_right.item<int64_t>()) / total},
      {"test_loss", loss_sum.item<double>() / total}};
  if (digits) {
    metrics["digit_accuracy"] = static_cast<double>(digits_right.item<int64_t>()) /
                                (total * static_cast<double>(answer_digits));
  }
  return metrics;
}

nlohmann::json arithmetic_metrics(const LogitsFn& forward, const torch::Tensor& ids,
                                  int64_t answer_offset, int64_t answer_digits) {
  return arithmetic_metrics(Decoder{forward, 0, {}}, ids, answer_offset, answer_digits);
}

nlohmann::json arithmetic_metrics(const LogitsFn& forward, const CompleteFn& complete,
                                  const torch::Tensor& ids, int64_t answer_offset,
                                  int64_t answer_digits) {
  return arithmetic_metrics(Decoder{forward, 0, complete}, ids, answer_offset, answer_digits);
}

nlohmann::json decoder_metrics(MaskedTransformer& model, const torch::Tensor& test_ids,
                               const torch::Tensor& train_ids, int64_t answer_offset,
                               int64_t answer_digits) {
  // The teacher-forced pass computes the answer rows' logits and keeps its keys and values; the
  // completion of the rows it gets wrong starts from them.
  MaskedTransformerImpl::KeyValueCache cache;
  const MaskedTransformerImpl::Rows answer_rows{answer_offset - 1, answer_digits};
  Decoder decoder;
  decoder.first = answer_rows.first;
  decoder.forward = [&](const torch::Tensor& ids) {
    return model->forward_cached(ids, cache, answer_rows);
  };
  decoder.complete = [&](const torch::Tensor& ids, const torch::Tensor& rows,
                         const torch::Tensor& keep, int64_t last) {
    MaskedTransformerImpl::KeyValueCache picked;  // the rows' part of the cache
    for (size_t l = 0; l < cache.keys.size(); ++l) {
      picked.keys.push_back(cache.keys[l].index_select(0, rows));
      picked.values.push_back(cache.values[l].index_select(0, rows));
    }
    return model->greedy_complete(ids, keep, last, &picked);
  };
  auto metrics = arithmetic_metrics(decoder, test_ids, answer_offset, answer_digits);
  const auto train =
      arithmetic_metrics(decoder, train_ids, answer_offset, answer_digits, /*digits=*/false);
  metrics["accuracy"] = metrics["sequence_accuracy"];  // the headline every task reports
  metrics["train_sequence_accuracy"] = train["sequence_accuracy"];
  return metrics;
}

std::unique_ptr<Experiment> make_arithmetic_experiment(const ExperimentConfig& config) {
  return std::make_unique<ArithmeticExperiment>(config);
}

}  // namespace maskprior::runtime
