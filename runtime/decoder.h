// The causal decoder that completes a prompt with an answer span: arithmetic (`a[3] op b[3] eq
// c[K]`, runtime/arithmetic_experiment.h) and your sequence files (runtime/sequence_experiment.h).
// Training uses teacher forcing with cross-entropy on the answer tokens only (loss_rows `answer`:
// the logits at row answer_offset − 1 + j predict answer token j), or on every next token
// (loss_rows `all`: row r predicts token r + 1). Evaluation decodes greedily: the prompt before the
// answer is fed, then its tokens are decoded one at a time, each argmax written back before the
// next (docs/arithmetic.md, "Model, loss and evaluation"). The experiments describe their data and
// derive from DecoderExperiment; the model's own entry points (forward(ids, rows),
// forward_cached, forward_position) are declared in runtime/model.h, and the cached passes are
// defined in runtime/decoder_cache.cpp.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>

#include "runtime/experiment.h"
#include "runtime/model.h"

namespace maskprior::runtime {

using KeyValueCache = MaskedTransformerImpl::KeyValueCache;

/// Rows of token ids that share a prefix: the rows of `ids` [B, E] (int64, CPU) sorted, the
/// longest common prefixes of neighbours give how many distinct prefixes of each length P there
/// are; `length` is the P ≤ limit that minimises the positions to compute, U_P · P + B · (E − P),
/// or 0 where that saves under a tenth of B · E. `representatives` [U] holds one row index per
/// distinct prefix, `group` [B] each row's prefix (an index into representatives).
struct SharedPrefix {
  int64_t length = 0;
  torch::Tensor representatives, group;
};
SharedPrefix shared_prefix(const torch::Tensor& ids, int64_t limit);

/// A causal decoder's forward pass: token ids [B, N] → logits [B, N, vocab].
using LogitsFn = std::function<torch::Tensor(const torch::Tensor&)>;
/// A causal decoder's greedy completion (ids [R, N], rows [R], keep [R], last) → ids [R, N]:
/// positions ≤ keep[r] kept, each later one ≤ last the argmax at the position before, as
/// greedy_complete does. `rows` are the indices of these sequences in the last batch given to the
/// forward pass (whose key/value cache the completion may reuse).
using CompleteFn = std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&,
                                               const torch::Tensor&, int64_t)>;

/// How the decoding functions below run a causal decoder: `forward` gives the logits
/// [B, N', vocab] of positions [first, first + N'] (first = 0, N' = N: forward(ids)), which must
/// include the rows that predict the answer; `complete`, if set, finishes the rows the
/// teacher-forced pass gets wrong (else they are decoded pass by pass with `forward`, which then
/// must give every row from `first` on).
struct Decoder {
  LogitsFn forward;
  int64_t first = 0;
  CompleteFn complete = {};  // Decoder{forward}: the rows are decoded pass by pass
};

/// Teacher-forced cross-entropy of the answer tokens: mean over j of
/// CE(logits[:, answer_offset − 1 + j], answers[:, j]); logits [B, N, V], answers [B, K].
torch::Tensor answer_loss(const torch::Tensor& logits, const torch::Tensor& answers,
                          int64_t answer_offset);
/// answer_loss(model->forward(ids), answers, answer_offset) from the K answer rows' logits alone
/// (MaskedTransformerImpl::forward(ids, rows)): what training minimises, for less work.
torch::Tensor answer_rows_loss(MaskedTransformer& model, const torch::Tensor& ids,
                               const torch::Tensor& answers, int64_t answer_offset);

/// Teacher-forced cross-entropy of every next token: mean over r < N − 1 of
/// CE(logits[:, r], ids[:, r + 1]); logits [B, N, V], ids [B, N].
torch::Tensor next_token_loss(const torch::Tensor& logits, const torch::Tensor& ids);

/// Greedy decoding, batched: for j = 0..K−1 runs `forward` on the sequences and writes the argmax
/// of row answer_offset − 1 + j into position answer_offset + j (K passes in all). Positions from
/// answer_offset on are ignored on input (a causal model cannot see them before they are written).
/// Returns the decoded answer tokens [B, K]. No gradients.
torch::Tensor greedy_decode(const LogitsFn& forward, const torch::Tensor& ids,
                            int64_t answer_offset, int64_t answer_length);

/// Greedy completion by the key/value cache, no gradients. Row b of `ids` [B, T] (T ≤ N) keeps its
/// tokens at positions ≤ keep[b] ([B] int64); every later position p ≤ last gets the argmax of the
/// logits at p − 1, as full forward passes would give it. `cache` (from forward_cached on ids that
/// agree with these before keep[b], rows in this order, holding positions [0, last) at least) saves
/// the pass over them; without it one pass is made. Then one position at a time
/// (MaskedTransformerImpl::forward_position). Returns the completed ids [B, T]. InputError for a
/// model that is no causal decoder, shapes that do not fit it or a cache too short.
torch::Tensor greedy_complete(MaskedTransformer& model, const torch::Tensor& ids,
                              const torch::Tensor& keep, int64_t last,
                              KeyValueCache* cache = nullptr);

/// The same answers as greedy_decode, from one teacher-forced pass of `decoder` over `ids`
/// (answers in place) plus greedy decoding of the rows it gets wrong only. With a causal model the
/// greedy prefix of a row equals its true answer up to the first token the teacher-forced argmax
/// gets wrong, so greedy and teacher-forced argmax agree up to and including that token; only the
/// tokens after it are decoded again, by decoder.complete or else pass by pass, on the rows that
/// need them. `teacher_logits`, if given, receives decoder.forward's logits. No gradients.
torch::Tensor greedy_decode_teacher_forced(const Decoder& decoder, const torch::Tensor& ids,
                                           int64_t answer_offset, int64_t answer_length,
                                           torch::Tensor* teacher_logits = nullptr);

/// The decoder the experiments evaluate with: `forward` is the model's pass over the answer rows
/// only (forward_cached, first = answer_offset − 1), which keeps its keys and values; `complete`
/// is greedy_complete of the wrong rows from their part of that cache. A pass takes as many rows
/// as keep its attention scores and probabilities (rows × heads × T × T floats each, every layer)
/// under `pass_bytes` (at least one row); the passes' caches are put together, so the result
/// does not depend on it.
inline constexpr double kPassAttentionBytes = 512.0 * (1 << 20);
Decoder cached_decoder(MaskedTransformer model, int64_t answer_offset, int64_t answer_length,
                       double pass_bytes = kPassAttentionBytes);

/// Metrics of `decoder` on full sequences `ids` [P, N] (answers in place), evaluated in chunks of
/// kEvalRows: sequence_accuracy (all K answer tokens decoded right), token_accuracy (share of
/// right tokens) and test_loss (teacher-forced answer_loss), by greedy_decode_teacher_forced: the
/// results of greedy_decode, at the cost of about one forward pass when most rows are right. With
/// `tokens` false, sequence_accuracy and test_loss only, from the teacher-forced pass alone (a
/// row is right exactly when its teacher-forced argmax is).
nlohmann::json answer_metrics(const Decoder& decoder, const torch::Tensor& ids,
                              int64_t answer_offset, int64_t answer_length, bool tokens = true);

/// A causal decoder's metrics on held-out `test_ids` and on `train_ids` (rows of the training
/// set), by cached_decoder: answer_metrics of the test rows plus `accuracy` (= sequence_accuracy)
/// and `train_sequence_accuracy` (from the teacher-forced pass alone). No gradients.
nlohmann::json decoder_metrics(MaskedTransformer& model, const torch::Tensor& test_ids,
                               const torch::Tensor& train_ids, int64_t answer_offset,
                               int64_t answer_length);

/// Which rows of a causal decoder's output training reads (the setting loss_rows).
enum class LossRows {
  kAnswer,  // `answer`: the rows that predict the answer span (answer_loss)
  kAll,     // `all`: every row that predicts a next token (next_token_loss)
};
/// The LossRows a loss_rows setting names; InputError for anything but `answer` and `all`.
LossRows parse_loss_rows(const std::string& setting);

/// The data of one sequence length of a causal decoder over several sizes (set_sized_data).
struct SizedData {
  SizeGroup group;  // its size, layout and row counts (set_sized_data fills these)
  torch::Tensor train_ids, test_ids;  // [T_g, N_g], [E_g, N_g] (int64, answers in place)
  int64_t answer_offset = 0, answer_length = 0;
};

/// What the causal-decoder experiments share. A subclass describes its data: it calls set_data
/// in its constructor and adds layout, model_config, probe_inputs and what else it has to say.
/// Batches hold whole sequences and their answer tokens; the loss is answer_loss (answer rows
/// only in training) or, with loss_rows `all`, next_token_loss; evaluate reports decoder_metrics
/// (the answer rows whatever loss_rows says) with test_size and train_size.
class DecoderExperiment : public Experiment {
 public:
  int64_t train_size() const override;
  /// inputs: the training sequences `rows` [B, N]; targets: their answer tokens [B, K].
  Batch train_batch(const torch::Tensor& rows) const override;
  torch::Tensor loss(const torch::Tensor& output, const Batch& batch) const override;
  torch::Tensor train_loss(MaskedTransformer& model, const Batch& batch) const override;
  /// decoder_metrics of the test sequences and an evenly spaced sample of ≤ 1,000 training ones,
  /// token_accuracy under the name set_data gave it, test_size and train_size.
  nlohmann::json evaluate(MaskedTransformer& model) const override;
  /// The test sequences (answers in place); test_loss is the cross-entropy of the answer rows.
  TestRows test_rows() const override;
  void to(torch::Device device) override;
  std::vector<SizeGroup> size_groups() const override;

 protected:
  /// Reads settings.loss_rows (InputError unless `answer` or `all`).
  explicit DecoderExperiment(const ExperimentSettings& settings);

  /// The data: training and test sequences [T, N], [E, N] (int64, answers in place), their answer
  /// span [answer_offset, answer_offset + answer_length), and what the family calls the share of
  /// right answer tokens (`digit_accuracy` for arithmetic).
  void set_data(torch::Tensor train_ids, torch::Tensor test_ids, int64_t answer_offset,
                int64_t answer_length, std::string token_metric = "token_accuracy");

  /// The data of a run over several sizes, instead of set_data: one entry per size, ascending
  /// (training rows in this order); a size may have no training rows (tested only) or no test
  /// rows. evaluate() then reports the pooled metrics over every test row and `by_length`, the
  /// metrics of each size (keyed by its size, with its token count N and rows).
  void set_sized_data(std::vector<SizedData> sizes, std::string token_metric = "token_accuracy");

  torch::Tensor train_ids_, test_ids_;  // [T, N], [E, N]
  torch::Tensor train_eval_ids_;        // the training rows evaluate re-decodes

 private:
  /// The size whose sequences have `tokens` tokens (InternalError if none).
  const SizedData& sized(int64_t tokens) const;
  /// evaluate() of a run over several sizes.
  nlohmann::json evaluate_sizes(MaskedTransformer& model) const;

  std::vector<SizedData> sizes_;
  std::vector<torch::Tensor> sized_train_eval_;  // per size: the training rows re-decoded

  LossRows loss_rows_ = LossRows::kAnswer;
  int64_t answer_offset_ = 0, answer_length_ = 0;
  std::string token_metric_;
};

}  // namespace maskprior::runtime
