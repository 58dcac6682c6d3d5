#include "runtime/decoder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "core/error.h"

namespace maskprior::runtime {

namespace {

inline constexpr int64_t kTrainEvalRows = 1000;  // training rows re-decoded at each evaluation

/// The part of `cache` that belongs to the batch rows `rows` ([R] int64), in that order.
KeyValueCache cache_rows(const KeyValueCache& cache, const torch::Tensor& rows) {
  KeyValueCache picked;
  for (size_t l = 0; l < cache.keys.size(); ++l) {
    picked.keys.push_back(cache.keys[l].index_select(0, rows));
    picked.values.push_back(cache.values[l].index_select(0, rows));
  }
  picked.length = cache.length;
  return picked;
}

}  // namespace

torch::Tensor answer_loss(const torch::Tensor& logits, const torch::Tensor& answers,
                          int64_t answer_offset) {
  const int64_t length = answers.size(1);
  auto rows = logits.narrow(1, answer_offset - 1, length);  // [B, K, V]: rows that predict c[j]
  return torch::nn::functional::cross_entropy(rows.reshape({-1, rows.size(-1)}),
                                              answers.reshape({-1}));
}

torch::Tensor answer_rows_loss(MaskedTransformer& model, const torch::Tensor& ids,
                               const torch::Tensor& answers, int64_t answer_offset) {
  // Rows answer_offset − 1 .. answer_offset + K − 2: in their logits, c[j] is row j.
  const auto logits = model->forward(ids, {answer_offset - 1, answers.size(1)});
  return answer_loss(logits, answers, 1);
}

torch::Tensor next_token_loss(const torch::Tensor& logits, const torch::Tensor& ids) {
  const int64_t n = ids.size(1);
  const auto rows = logits.narrow(1, 0, n - 1);  // [B, N − 1, V]: row r predicts token r + 1
  return torch::nn::functional::cross_entropy(rows.reshape({-1, rows.size(-1)}),
                                              ids.narrow(1, 1, n - 1).reshape({-1}));
}

LossRows parse_loss_rows(const std::string& setting) {
  if (setting == "answer") return LossRows::kAnswer;
  if (setting == "all") return LossRows::kAll;
  throw InputError(fmt::format("loss_rows must be answer or all, got {}", quote_input(setting)));
}

torch::Tensor greedy_decode(const LogitsFn& forward, const torch::Tensor& ids,
                            int64_t answer_offset, int64_t answer_length) {
  torch::NoGradGuard no_grad;
  auto sequences = ids.clone();
  sequences.narrow(1, answer_offset, answer_length).fill_(0);  // nothing of the answer leaks in
  for (int64_t j = 0; j < answer_length; ++j) {
    auto next = forward(sequences).select(1, answer_offset - 1 + j).argmax(-1);  // [B]
    sequences.select(1, answer_offset + j).copy_(next);
  }
  return sequences.narrow(1, answer_offset, answer_length);
}

torch::Tensor greedy_complete(MaskedTransformer& model, const torch::Tensor& ids,
                              const torch::Tensor& keep, int64_t last, KeyValueCache* cache) {
  const auto& config = model->config();
  const int64_t n = config.seq_len;
  if (config.readout != Readout::kCausalLm || ids.dim() != 2 || ids.size(1) != n ||
      keep.dim() != 1 || keep.size(0) != ids.size(0) || last >= n) {
    throw InputError(fmt::format(
        "[greedy_complete] needs a causal decoder, ids [B, {}], keep [B] and last < {}; got ids "
        "[{}], keep [{}], last {}",
        n, n, fmt::join(ids.sizes(), ", "), fmt::join(keep.sizes(), ", "), last));
  }
  torch::NoGradGuard no_grad;
  auto out = ids.clone();
  if (out.size(0) == 0) return out;
  KeyValueCache own;
  if (cache == nullptr) {
    model->forward_cached(out, own);
    cache = &own;
  }
  if (cache->keys.size() != static_cast<size_t>(config.depth) || cache->keys[0].size(2) < last) {
    throw InputError(
        fmt::format("[greedy_complete] the key/value cache holds positions [0, {}) of {} layers; "
                    "completing up to position {} needs [0, {}) of {}",
                    cache->keys.empty() ? 0 : cache->keys[0].size(2), cache->keys.size(), last,
                    last, config.depth));
  }
  // Position p is computed again from min keep on (where a row's token may differ from the
  // cached pass: p ≥ keep[b]); its logits give position p + 1.
  for (int64_t p = std::max<int64_t>(0, keep.min().item<int64_t>()); p < last; ++p) {
    auto next = model->forward_position(out.select(1, p), p, *cache).argmax(-1);  // [B]
    auto column = out.select(1, p + 1);
    column.copy_(torch::where(keep.le(p), next, column));
  }
  return out;
}

torch::Tensor greedy_decode_teacher_forced(const Decoder& decoder, const torch::Tensor& ids,
                                           int64_t answer_offset, int64_t answer_length,
                                           torch::Tensor* teacher_logits) {
  torch::NoGradGuard no_grad;
  const auto logits = decoder.forward(ids);
  if (teacher_logits) *teacher_logits = logits;
  const int64_t row = answer_offset - 1 - decoder.first;  // of logits, predicting c[0]
  const auto answers = ids.narrow(1, answer_offset, answer_length);
  auto decoded = logits.narrow(1, row, answer_length).argmax(-1);  // [B, K]
  const auto wrong = decoded != answers;
  // first[b]: the first wrong token of row b (K where the row is right).
  const auto first =
      torch::where(wrong.any(1), wrong.to(torch::kByte).argmax(1),
                   torch::full_like(wrong.select(1, 0), answer_length, torch::kLong));
  const auto rows = first.lt(answer_length - 1).nonzero().squeeze(1);  // tokens left to decode
  if (rows.numel() == 0) return decoded;
  // The rows to decode again: the true answer before `first`, the wrong token at `first`.
  auto sequences = ids.index_select(0, rows);
  const auto row_first = first.index_select(0, rows).unsqueeze(1);  // [R, 1]
  const auto token = torch::arange(answer_length, first.options()).unsqueeze(0);
  sequences.narrow(1, answer_offset, answer_length)
      .copy_(torch::where(token.le(row_first), decoded.index_select(0, rows),
                          torch::zeros_like(row_first)));
  if (decoder.complete) {
    const auto done = decoder.complete(sequences, rows, row_first.squeeze(1) + answer_offset,
                                       answer_offset + answer_length - 1);
    decoded.index_copy_(0, rows, done.narrow(1, answer_offset, answer_length));
    return decoded;
  }
  const int64_t start = row_first.min().item<int64_t>() + 1;
  for (int64_t j = start; j < answer_length; ++j) {
    const auto active = row_first.squeeze(1).lt(j).nonzero().squeeze(1);  // row_first < j
    const auto next =
        decoder.forward(sequences.index_select(0, active)).select(1, row + j).argmax(-1);
    sequences.select(1, answer_offset + j).index_copy_(0, active, next);
  }
  decoded.index_copy_(0, rows, sequences.narrow(1, answer_offset, answer_length));
  return decoded;
}

Decoder cached_decoder(MaskedTransformer model, int64_t answer_offset, int64_t answer_length) {
  // The teacher-forced pass computes the answer rows' logits and keeps its keys and values; the
  // completion of the rows it gets wrong starts from them.
  auto cache = std::make_shared<KeyValueCache>();
  const MaskedTransformerImpl::Rows answer_rows{answer_offset - 1, answer_length};
  Decoder decoder;
  decoder.first = answer_rows.first;
  decoder.forward = [model, cache, answer_rows](const torch::Tensor& ids) mutable {
    return model->forward_cached(ids, *cache, answer_rows);
  };
  decoder.complete = [model, cache](const torch::Tensor& ids, const torch::Tensor& rows,
                                    const torch::Tensor& keep, int64_t last) mutable {
    auto picked = cache_rows(*cache, rows);
    return greedy_complete(model, ids, keep, last, &picked);
  };
  return decoder;
}

nlohmann::json answer_metrics(const Decoder& decoder, const torch::Tensor& ids,
                              int64_t answer_offset, int64_t answer_length, bool tokens) {
  torch::NoGradGuard no_grad;
  const int64_t rows = ids.size(0);
  if (rows == 0) throw InternalError("answer_metrics: no sequences");
  auto loss_sum =
      torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(ids.device()));
  auto sequences_right = torch::zeros({}, ids.options().dtype(torch::kLong));
  auto tokens_right = torch::zeros_like(sequences_right);
  const int64_t row = answer_offset - decoder.first;  // answer_loss's offset into the logits
  for (int64_t start = 0; start < rows; start += kEvalRows) {
    const auto chunk = ids.narrow(0, start, std::min(kEvalRows, rows - start));
    const auto answers = chunk.narrow(1, answer_offset, answer_length);
    torch::Tensor logits, decoded;
    if (tokens) {
      decoded = greedy_decode_teacher_forced(decoder, chunk, answer_offset, answer_length, &logits);
    } else {
      logits = decoder.forward(chunk);
      decoded = logits.narrow(1, row - 1, answer_length).argmax(-1);
    }
    loss_sum +=
        answer_loss(logits, answers, row).to(torch::kDouble) * static_cast<double>(chunk.size(0));
    const auto right = decoded == answers;
    sequences_right += right.all(1).sum();
    tokens_right += right.sum();
  }
  const auto total = static_cast<double>(rows);
  nlohmann::json metrics = {
      {"sequence_accuracy", static_cast<double>(sequences_right.item<int64_t>()) / total},
      {"test_loss", loss_sum.item<double>() / total}};
  if (tokens) {
    metrics["token_accuracy"] = static_cast<double>(tokens_right.item<int64_t>()) /
                                (total * static_cast<double>(answer_length));
  }
  return metrics;
}

nlohmann::json decoder_metrics(MaskedTransformer& model, const torch::Tensor& test_ids,
                               const torch::Tensor& train_ids, int64_t answer_offset,
                               int64_t answer_length) {
  const auto decoder = cached_decoder(model, answer_offset, answer_length);
  auto metrics = answer_metrics(decoder, test_ids, answer_offset, answer_length);
  const auto train =
      answer_metrics(decoder, train_ids, answer_offset, answer_length, /*tokens=*/false);
  metrics["accuracy"] = metrics["sequence_accuracy"];  // the headline every task reports
  metrics["train_sequence_accuracy"] = train["sequence_accuracy"];
  return metrics;
}

DecoderExperiment::DecoderExperiment(const ExperimentSettings& settings)
    : loss_rows_(parse_loss_rows(settings.loss_rows)) {}

int64_t DecoderExperiment::train_size() const {
  return train_ids_.size(0);
}

Batch DecoderExperiment::train_batch(const torch::Tensor& rows) const {
  auto inputs = train_ids_.index_select(0, rows.to(train_ids_.device()));
  return {inputs, inputs.narrow(1, answer_offset_, answer_length_).contiguous()};
}

torch::Tensor DecoderExperiment::loss(const torch::Tensor& output, const Batch& batch) const {
  if (loss_rows_ == LossRows::kAll) return next_token_loss(output, batch.inputs);
  return answer_loss(output, batch.targets, answer_offset_);
}

torch::Tensor DecoderExperiment::train_loss(MaskedTransformer& model, const Batch& batch) const {
  if (loss_rows_ == LossRows::kAll) return loss(model->forward(batch.inputs), batch);
  return answer_rows_loss(model, batch.inputs, batch.targets, answer_offset_);
}

nlohmann::json DecoderExperiment::evaluate(MaskedTransformer& model) const {
  auto metrics = decoder_metrics(model, test_ids_, train_eval_ids_, answer_offset_, answer_length_);
  if (token_metric_ != "token_accuracy") {
    metrics[token_metric_] = metrics["token_accuracy"];
    metrics.erase("token_accuracy");
  }
  metrics["test_size"] = test_ids_.size(0);
  metrics["train_size"] = train_ids_.size(0);
  return metrics;
}

TestRows DecoderExperiment::test_rows() const {
  return {
      {{"inputs", test_ids_.to(torch::kCPU)}},
      {{"loss", "answer"}, {"answer_offset", answer_offset_}, {"answer_length", answer_length_}}};
}

void DecoderExperiment::to(torch::Device device) {
  for (auto* t : {&train_ids_, &test_ids_, &train_eval_ids_}) *t = t->to(device);
}

void DecoderExperiment::set_data(torch::Tensor train_ids, torch::Tensor test_ids,
                                 int64_t answer_offset, int64_t answer_length,
                                 std::string token_metric) {
  train_ids_ = std::move(train_ids);
  test_ids_ = std::move(test_ids);
  answer_offset_ = answer_offset;
  answer_length_ = answer_length;
  token_metric_ = std::move(token_metric);
  // An evenly spaced sample of the training rows: how well the model fits what it saw.
  const int64_t rows = train_ids_.size(0);
  const int64_t sample = std::min(kTrainEvalRows, rows);
  train_eval_ids_ =
      train_ids_.index_select(0, (torch::arange(sample, torch::kLong) * rows).div(sample, "floor"));
}

}  // namespace maskprior::runtime
