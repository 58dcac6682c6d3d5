#include "runtime/sequence_experiment.h"

#include <fmt/format.h>

#include <utility>

#include "core/error.h"
#include "runtime/decoder.h"
#include "tasks/random.h"
#include "tasks/sequence_file.h"

namespace maskprior::runtime {

namespace {

inline constexpr uint64_t kProbeSeed = 0x5e9'da7aULL;  // fixed: every run probes alike

/// Rows `rows` of ids [examples, N].
torch::Tensor select_rows(const torch::Tensor& ids, const std::vector<int64_t>& rows) {
  return ids.index_select(0, torch::tensor(rows, torch::kLong));
}

torch::Tensor ids_tensor(std::vector<int64_t> ids, int64_t length) {
  const auto rows = static_cast<int64_t>(ids.size()) / length;
  return torch::tensor(ids, torch::kLong).view({rows, length});
}

class SequenceExperiment : public DecoderExperiment {
 public:
  explicit SequenceExperiment(const ExperimentConfig& config)
      : DecoderExperiment(config),
        config_(config),
        span_(tasks::predicted_span(config.layout, config.predict, config.layout_source)) {
    const auto train = tasks::read_sequence_file(config.data, config.layout);
    vocabulary_ = tasks::sequence_vocabulary(train);
    const auto length = config.layout.size();
    auto train_ids = ids_tensor(
        tasks::encode_sequences(train, vocabulary_, config.data, config.layout, span_), length);
    if (config.test_data.empty()) {
      const auto split = tasks::hold_out(train.examples(), config.seed, config.data);
      set_data(select_rows(train_ids, split.train), select_rows(train_ids, split.test),
               span_.offset, span_.length);
    } else {
      const auto test = tasks::read_sequence_file(config.test_data, config.layout);
      auto test_ids = ids_tensor(
          tasks::encode_sequences(test, vocabulary_, config.data, config.layout, span_), length);
      tasks::check_predicted_symbols(test, train, span_);
      set_data(std::move(train_ids), std::move(test_ids), span_.offset, span_.length);
    }
  }

  Layout layout() const override { return config_.layout; }

  ModelConfig model_config(const ExperimentConfig& config) const override {
    return sized_model_config(config, static_cast<int64_t>(vocabulary_.size()),
                              config_.layout.size(), Readout::kCausalLm);
  }

  torch::Tensor probe_inputs(int64_t size) const override {
    const auto order = tasks::shuffled_rows(train_ids_.size(0), size, kProbeSeed);
    return train_ids_.index_select(0, torch::tensor(order, torch::kLong).to(train_ids_.device()))
        .to(torch::kCPU);
  }

  std::vector<std::pair<std::string, nlohmann::json>> run_files() const override {
    const bool held_out = config_.test_data.empty();
    nlohmann::json vocab = {
        {"symbols", vocabulary_},
        {"layout", layout_text(config_.layout)},
        {"predict", {{"span", span_.name}, {"offset", span_.offset}, {"length", span_.length}}},
        {"train", {{"path", config_.data}, {"examples", train_ids_.size(0)}}},
        {"test",
         {{"path", held_out ? config_.data : config_.test_data},
          {"held_out", held_out},
          {"examples", test_ids_.size(0)}}}};
    return {{tasks::kVocabularyFile, vocab}};
  }

  std::string description() const override {
    return fmt::format(
        "data {}: {} training and {} test examples{}, {} symbols, predicting {} ({} tokens)",
        config_.data, train_ids_.size(0), test_ids_.size(0),
        config_.test_data.empty() ? fmt::format(" (a seeded {:.0f}% held out: no --test-data)",
                                                tasks::kHeldOutShare * 100)
                                  : fmt::format(" (from {})", config_.test_data),
        vocabulary_.size(), span_.name, span_.length);
  }

 private:
  ExperimentConfig config_;
  Span span_;
  std::vector<std::string> vocabulary_;
};

}  // namespace

std::unique_ptr<Experiment> make_sequence_experiment(const ExperimentConfig& config) {
  return std::make_unique<SequenceExperiment>(config);
}

}  // namespace maskprior::runtime
