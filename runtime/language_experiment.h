// Character-level causal language modelling (task fortunes-char, tasks/text_corpus.h): the
// corpus is split by file (seeded by config.seed), each split's text cut into non-overlapping
// windows of n + 1 bytes (n = config.n, the context; specs/language/distance.mask's n = 64), and a
// causal decoder over 256 byte values predicts byte t + 1 from bytes ≤ t at every position
// (cross-entropy over all n positions). Characters are bytes.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/experiment.h"

namespace maskprior::runtime {

/// The windows of `text`: byte ids [W, n + 1] (uint8, CPU), window w = text[w·n, w·n + n + 1),
/// W = (|text| − 1) / n (the last, partial window dropped).
torch::Tensor text_windows(const std::string& text, int64_t n);

/// Mean cross-entropy (nats per byte) of logits [B, n, V] against targets [B, n].
torch::Tensor next_byte_loss(const torch::Tensor& logits, const torch::Tensor& targets);

/// fortunes-char on config.data_dir ("" = the fortunes package): training windows =
/// config.train_size of them (0 = all; a seeded sample otherwise), validation and test =
/// config.test_size evenly spaced windows of their split (at most all). Metrics: test_loss (nats
/// per byte), test_bpc, test_perplexity, validation_loss, validation_bpc, test_accuracy (next
/// byte).
std::unique_ptr<Experiment> make_language_experiment(const ExperimentConfig& config);

}  // namespace maskprior::runtime
