// Your own sequence data (docs/your-data.md): examples from a data file
// (tasks/sequence_file.h) laid out as the spec's tokens, learned by a causal decoder
// (runtime/decoder.h) whose answer is the span config.predict. Training uses teacher forcing with
// cross-entropy on the rows that predict the span (the row before each of its tokens); evaluation
// decodes the span greedily from the prefix before it. The built-in arithmetic tasks are the
// special case of `a[3] plus b[3] eq c[K]` files predicting c.
#pragma once

#include <memory>

#include "runtime/experiment.h"

namespace maskprior::runtime {

/// The experiment of a sequence-data run: TRAIN = config.data, TEST = config.test_data or else a
/// seeded 10% of TRAIN held out (config.seed), layout = config.layout (the spec's), predicting
/// config.predict. Metrics: sequence_accuracy (every symbol of the span right), token_accuracy,
/// test_loss, train_sequence_accuracy (on up to 1,000 training examples), accuracy (=
/// sequence_accuracy), train_size, test_size. Its vocabulary() (the run folder keeps it) holds the vocabulary
/// (token id = index into "symbols") and where the data came from. Throws SpecError at the
/// offending line for bad data (tasks/sequence_file.h: wrong symbol counts, bytes that are not
/// UTF-8, a TEST symbol TRAIN lacks or a symbol TEST predicts that TRAIN never predicts) and for
/// a span the layout lacks.
std::unique_ptr<Experiment> make_sequence_experiment(const ExperimentConfig& config);

}  // namespace maskprior::runtime
