#include "runtime/decoder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

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
  const int64_t t = ids.dim() == 2 ? ids.size(1) : 0;
  if (config.readout != Readout::kCausalLm || t < 1 || t > n || keep.dim() != 1 ||
      keep.size(0) != ids.size(0) || last >= t) {
    throw InputError(fmt::format(
        "[greedy_complete] needs a causal decoder, ids [B, T] with T <= {}, keep [B] and "
        "last < T; got ids [{}], keep [{}], last {}",
        n, fmt::join(ids.sizes(), ", "), fmt::join(keep.sizes(), ", "), last));
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

Decoder cached_decoder(MaskedTransformer model, int64_t answer_offset, int64_t answer_length,
                       double pass_bytes) {
  // The teacher-forced pass computes the answer rows' logits and keeps its keys and values; the
  // completion of the rows it gets wrong starts from them.
  auto cache = std::make_shared<KeyValueCache>();
  const MaskedTransformerImpl::Rows answer_rows{answer_offset - 1, answer_length};
  Decoder decoder;
  decoder.first = answer_rows.first;
  decoder.forward = [model, cache, answer_rows, pass_bytes](const torch::Tensor& ids) mutable {
    // Passes of as many rows as pass_bytes allows: a pass holds every layer's scores and
    // probabilities, rows × heads × T × T floats each (at T = 3,003 and 4 heads one row is
    // 288 MB); the key/value caches of the passes are put together for the completion.
    const auto& c = model->config();
    const int64_t t = ids.dim() == 2 ? ids.size(1) : 1;
    const double per_row = 8.0 * static_cast<double>(c.heads) * static_cast<double>(t * t);
    const auto rows = std::max<int64_t>(1, static_cast<int64_t>(pass_bytes / per_row));
    if (ids.dim() != 2 || ids.size(0) <= rows) {
      return model->forward_cached(ids, *cache, answer_rows);
    }
    std::vector<torch::Tensor> logits;
    std::vector<std::vector<torch::Tensor>> keys(static_cast<size_t>(c.depth)),
        values(static_cast<size_t>(c.depth));
    for (int64_t start = 0; start < ids.size(0); start += rows) {
      KeyValueCache part;
      logits.push_back(model->forward_cached(
          ids.narrow(0, start, std::min(rows, ids.size(0) - start)), part, answer_rows));
      for (size_t l = 0; l < keys.size(); ++l) {
        keys[l].push_back(part.keys[l]);
        values[l].push_back(part.values[l]);
      }
      cache->length = part.length;
    }
    cache->keys.clear();
    cache->values.clear();
    for (size_t l = 0; l < keys.size(); ++l) {
      cache->keys.push_back(torch::cat(keys[l]));
      cache->values.push_back(torch::cat(values[l]));
    }
    return torch::cat(logits);
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
  metrics["train_sequence_accuracy"] = train["sequence_accuracy"];
  return metrics;
}

DecoderExperiment::DecoderExperiment(const ExperimentSettings& settings)
    : loss_rows_(parse_loss_rows(settings.loss_rows)) {}

int64_t DecoderExperiment::train_size() const {
  if (sizes_.empty()) return train_ids_.size(0);
  int64_t rows = 0;
  for (const SizedData& size : sizes_) rows += size.group.train_rows;
  return rows;
}

Batch DecoderExperiment::train_batch(const torch::Tensor& rows) const {
  if (sizes_.empty()) {
    auto inputs = train_ids_.index_select(0, rows.to(train_ids_.device()));
    return {inputs, inputs.narrow(1, answer_offset_, answer_length_).contiguous()};
  }
  const auto cpu_rows = rows.to(torch::kCPU);
  const int64_t low = cpu_rows.min().item<int64_t>(), high = cpu_rows.max().item<int64_t>();
  int64_t first = 0;
  for (const SizedData& size : sizes_) {
    const int64_t count = size.group.train_rows;
    if (low >= first && high < first + count) {
      auto inputs = size.train_ids.index_select(0, (cpu_rows - first).to(size.train_ids.device()));
      return {inputs, inputs.narrow(1, size.answer_offset, size.answer_length).contiguous()};
    }
    first += count;
  }
  throw InternalError(fmt::format(
      "a batch of rows {}..{} spans several sizes (a batch must hold one sequence length)", low,
      high));
}

const SizedData& DecoderExperiment::sized(int64_t tokens) const {
  for (const SizedData& size : sizes_) {
    if (size.group.layout.size() == tokens) return size;
  }
  throw InternalError(fmt::format("no size of this run has sequences of {} tokens", tokens));
}

torch::Tensor DecoderExperiment::loss(const torch::Tensor& output, const Batch& batch) const {
  if (loss_rows_ == LossRows::kAll) return next_token_loss(output, batch.inputs);
  return answer_loss(output, batch.targets,
                     sizes_.empty() ? answer_offset_ : sized(batch.inputs.size(1)).answer_offset);
}

torch::Tensor DecoderExperiment::train_loss(MaskedTransformer& model, const Batch& batch) const {
  if (loss_rows_ == LossRows::kAll) return loss(model->forward(batch.inputs), batch);
  return answer_rows_loss(
      model, batch.inputs, batch.targets,
      sizes_.empty() ? answer_offset_ : sized(batch.inputs.size(1)).answer_offset);
}

std::vector<SizeGroup> DecoderExperiment::size_groups() const {
  std::vector<SizeGroup> groups;
  for (const SizedData& size : sizes_) groups.push_back(size.group);
  return groups;
}

nlohmann::json DecoderExperiment::evaluate_sizes(MaskedTransformer& model) const {
  // Pooled over every test row: sums weighted by rows (tokens: by answer tokens).
  double rows = 0, sequences = 0, loss = 0, answer_tokens = 0, tokens = 0;
  double train_rows = 0, train_sequences = 0;
  nlohmann::json by_length = nlohmann::json::object();
  for (size_t g = 0; g < sizes_.size(); ++g) {
    const SizedData& size = sizes_[g];
    const auto decoder = cached_decoder(model, size.answer_offset, size.answer_length);
    if (size.group.test_rows > 0) {
      auto metrics = answer_metrics(decoder, size.test_ids, size.answer_offset, size.answer_length);
      const auto e = static_cast<double>(size.group.test_rows);
      rows += e;
      sequences += e * metrics["sequence_accuracy"].get<double>();
      loss += e * metrics["test_loss"].get<double>();
      answer_tokens += e * static_cast<double>(size.answer_length);
      tokens +=
          e * static_cast<double>(size.answer_length) * metrics["token_accuracy"].get<double>();
      metrics["tokens"] = size.group.layout.size();
      metrics["test_size"] = size.group.test_rows;
      metrics["train_size"] = size.group.train_rows;
      by_length[std::to_string(size.group.size)] = std::move(metrics);
    }
    if (sized_train_eval_[g].defined() && sized_train_eval_[g].size(0) > 0) {
      const auto train = answer_metrics(decoder, sized_train_eval_[g], size.answer_offset,
                                        size.answer_length, /*tokens=*/false);
      const auto r = static_cast<double>(sized_train_eval_[g].size(0));
      train_rows += r;
      train_sequences += r * train["sequence_accuracy"].get<double>();
    }
  }
  nlohmann::json metrics = {{"sequence_accuracy", sequences / rows},
                            {"test_loss", loss / rows},
                            {"token_accuracy", tokens / answer_tokens}};
  if (train_rows > 0) metrics["train_sequence_accuracy"] = train_sequences / train_rows;
  metrics["by_length"] = std::move(by_length);
  return metrics;
}

nlohmann::json DecoderExperiment::evaluate(MaskedTransformer& model) const {
  if (!sizes_.empty()) {
    auto metrics = evaluate_sizes(model);
    if (token_metric_ != "token_accuracy") {
      metrics[token_metric_] = metrics["token_accuracy"];
      metrics.erase("token_accuracy");
      for (auto& [size, m] : metrics["by_length"].items()) {
        m[token_metric_] = m["token_accuracy"];
        m.erase("token_accuracy");
      }
    }
    int64_t test = 0;
    for (const SizedData& size : sizes_) test += size.group.test_rows;
    metrics["test_size"] = test;
    metrics["train_size"] = train_size();
    return metrics;
  }
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
  if (!sizes_.empty()) {
    throw InputError(
        "--save-test-rows: a run over several sizes has test rows of several lengths, which "
        "test_rows.safetensors cannot hold yet; leave --save-test-rows out");
  }
  return {
      {{"inputs", test_ids_.to(torch::kCPU)}},
      {{"loss", "answer"}, {"answer_offset", answer_offset_}, {"answer_length", answer_length_}}};
}

void DecoderExperiment::to(torch::Device device) {
  if (!sizes_.empty()) {
    for (SizedData& size : sizes_) {
      for (auto* t : {&size.train_ids, &size.test_ids}) {
        if (t->defined()) *t = t->to(device);
      }
    }
    for (auto& t : sized_train_eval_) {
      if (t.defined()) t = t.to(device);
    }
    return;
  }
  for (auto* t : {&train_ids_, &test_ids_, &train_eval_ids_}) *t = t->to(device);
}

void DecoderExperiment::set_sized_data(std::vector<SizedData> sizes, std::string token_metric) {
  sizes_ = std::move(sizes);
  token_metric_ = std::move(token_metric);
  int64_t trained = 0;
  for (SizedData& size : sizes_) {
    size.group.train_rows = size.train_ids.defined() ? size.train_ids.size(0) : 0;
    size.group.test_rows = size.test_ids.defined() ? size.test_ids.size(0) : 0;
    trained += size.group.train_rows > 0 ? 1 : 0;
  }
  internal_check(trained > 0, "a run over several sizes trains on at least one");
  // The training rows re-decoded: kTrainEvalRows in all, shared evenly by the trained sizes.
  const int64_t per_size = (kTrainEvalRows + trained - 1) / trained;
  for (const SizedData& size : sizes_) {
    const int64_t rows = size.group.train_rows;
    const int64_t sample = std::min(per_size, rows);
    sized_train_eval_.push_back(
        rows == 0 ? torch::Tensor()
                  : size.train_ids.index_select(
                        0, (torch::arange(sample, torch::kLong) * rows).div(sample, "floor")));
  }
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
