// Arithmetic in the low-data regime (docs/arithmetic.md): 3-digit addition and multiplication as a causal
// decoder over `a[3] op b[3] eq c[K]` (tasks/arithmetic_task.h, docs/paper.md, "Our format").
// Training uses teacher forcing with cross-entropy on the answer tokens only: the logits at row
// answer_offset − 1 + j predict c[j]. Evaluation decodes greedily: the prompt `a op b =` is fed,
// then K tokens are decoded one at a time, each argmax written back before the next pass.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/experiment.h"
#include "runtime/model.h"
#include "tasks/arithmetic_task.h"

namespace maskprior::runtime {

/// A causal decoder's forward pass: token ids [B, N] → logits [B, N, vocab].
using LogitsFn = std::function<torch::Tensor(const torch::Tensor&)>;
/// A causal decoder's greedy completion (ids [R, N], rows [R], keep [R], last) → ids [R, N]:
/// positions ≤ keep[r] kept, each later one ≤ last the argmax at the position before, as
/// MaskedTransformerImpl::greedy_complete does. `rows` are the indices of these sequences in the
/// last batch given to the forward pass (whose key/value cache the completion may reuse).
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
  CompleteFn complete;
};

/// Token ids [P, N] (int64, CPU) of the problems `problems` (indices as in ArithmeticTask).
torch::Tensor arithmetic_ids(const tasks::ArithmeticTask& task,
                             const std::vector<int64_t>& problems);

/// Teacher-forced cross-entropy of the answer tokens: mean over j of
/// CE(logits[:, answer_offset − 1 + j], answers[:, j]); logits [B, N, V], answers [B, K].
torch::Tensor answer_loss(const torch::Tensor& logits, const torch::Tensor& answers,
                          int64_t answer_offset);
/// answer_loss(model->forward(ids), answers, answer_offset) from the K answer rows' logits alone
/// (MaskedTransformerImpl::forward(ids, rows)): what training minimises, for less work.
torch::Tensor answer_rows_loss(MaskedTransformer& model, const torch::Tensor& ids,
                               const torch::Tensor& answers, int64_t answer_offset);

/// Greedy decoding, batched: for j = 0..K−1 runs `forward` on the sequences and writes the argmax
/// of row answer_offset − 1 + j into position answer_offset + j (K passes in all). Positions from
/// answer_offset on are ignored on input (a causal model cannot see them before they are written).
/// Returns the decoded answer tokens [B, K]. No gradients.
torch::Tensor greedy_decode(const LogitsFn& forward, const torch::Tensor& ids,
                            int64_t answer_offset, int64_t answer_digits);

/// The same answers as greedy_decode, from one teacher-forced pass over `ids` (answers in place)
/// plus greedy passes over the rows it gets wrong only. With a causal model the greedy prefix of
/// a row equals its true answer up to the first digit the teacher-forced argmax gets wrong, so
/// greedy and teacher-forced argmax agree up to and including that digit; only the digits after
/// it are decoded again, pass by pass, on the rows that need them. `teacher_logits`, if given,
/// receives the teacher-forced logits [B, N, V]. No gradients.
/// With `complete`, the rows it gets wrong are finished by `complete` instead of pass by pass.
torch::Tensor greedy_decode_teacher_forced(const LogitsFn& forward, const torch::Tensor& ids,
                                           int64_t answer_offset, int64_t answer_digits,
                                           torch::Tensor* teacher_logits = nullptr,
                                           const CompleteFn* complete = nullptr);
/// The same with `decoder`; `teacher_logits` then gets decoder.forward's logits.
torch::Tensor greedy_decode_teacher_forced(const Decoder& decoder, const torch::Tensor& ids,
                                           int64_t answer_offset, int64_t answer_digits,
                                           torch::Tensor* teacher_logits = nullptr);

/// Metrics of a causal decoder on full sequences `ids` [P, N] (answers in place), evaluated in
/// chunks: sequence_accuracy (all K answer digits decoded right), digit_accuracy (share of right
/// digits) and test_loss (teacher-forced answer_loss). Decodes by greedy_decode_teacher_forced:
/// the results of greedy_decode, at the cost of about one forward pass when most rows are right.
nlohmann::json arithmetic_metrics(const LogitsFn& forward, const torch::Tensor& ids,
                                  int64_t answer_offset, int64_t answer_digits);
/// The same metrics, the wrong rows decoded by `complete` (the experiment's reuses the key/value
/// cache of the teacher-forced pass).
nlohmann::json arithmetic_metrics(const LogitsFn& forward, const CompleteFn& complete,
                                  const torch::Tensor& ids, int64_t answer_offset,
                                  int64_t answer_digits);
/// The same metrics with `decoder`; with `digits` false, sequence_accuracy and test_loss only,
/// from the teacher-forced pass alone (a row is right exactly when its teacher-forced argmax is).
nlohmann::json arithmetic_metrics(const Decoder& decoder, const torch::Tensor& ids,
                                  int64_t answer_offset, int64_t answer_digits, bool digits = true);

/// A causal decoder's metrics on held-out `test_ids` and on `train_ids` (rows of the training
/// set), by the teacher-forced pass (the answer rows only, MaskedTransformerImpl::forward_cached)
/// with greedy completion from its key/value cache of the rows it gets wrong: arithmetic_metrics
/// of the test rows plus `accuracy` (= sequence_accuracy) and `train_sequence_accuracy` (from the
/// teacher-forced pass alone). No gradients.
nlohmann::json decoder_metrics(MaskedTransformer& model, const torch::Tensor& test_ids,
                               const torch::Tensor& train_ids, int64_t answer_offset,
                               int64_t answer_digits);

/// The experiment for config.task ∈ {addition, multiplication}: training set = a seeded
/// config.train_fraction of all problems, test set = config.test_size other problems
/// (tasks::split_problems with config.seed).
std::unique_ptr<Experiment> make_arithmetic_experiment(const ExperimentConfig& config);

}  // namespace maskprior::runtime
