#include "runtime/sequence_experiment.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

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
    if (!config.sized_layouts.empty()) {
      read_sizes();
      return;
    }
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

  /// Lines of several lengths: the longest trained one's layout (a run over several sizes
  /// measures its prior there).
  Layout layout() const override { return probe_ids_.defined() ? probe_layout_ : config_.layout; }

  ModelConfig model_config(const ExperimentConfig& config) const override {
    return sized_model_config(config, static_cast<int64_t>(vocabulary_.size()),
                              std::max(longest_, config_.layout.size()), Readout::kCausalLm);
  }

  torch::Tensor probe_inputs(int64_t size) const override {
    const auto& ids = probe_ids_.defined() ? probe_ids_ : train_ids_;
    const auto order = tasks::shuffled_rows(ids.size(0), size, kProbeSeed);
    return ids.index_select(0, torch::tensor(order, torch::kLong).to(ids.device())).to(torch::kCPU);
  }

  nlohmann::json vocabulary() const override {
    const bool held_out = config_.test_data.empty();
    if (const auto groups = size_groups(); !groups.empty()) {
      nlohmann::json sizes = nlohmann::json::array();
      for (const auto& group : groups) {
        sizes.push_back({{"size", group.size},
                         {"layout", layout_text(group.layout)},
                         {"train_examples", group.train_rows},
                         {"test_examples", group.test_rows}});
      }
      return {{"symbols", vocabulary_},
              {"predict", span_.name},
              {"sizes", sizes},
              {"train", {{"path", config_.data}}},
              {"test",
               {{"path", held_out ? config_.data : config_.test_data}, {"held_out", held_out}}}};
    }
    nlohmann::json vocab = {
        {"symbols", vocabulary_},
        {"layout", layout_text(config_.layout)},
        {"predict", {{"span", span_.name}, {"offset", span_.offset}, {"length", span_.length}}},
        {"train", {{"path", config_.data}, {"examples", train_ids_.size(0)}}},
        {"test",
         {{"path", held_out ? config_.data : config_.test_data},
          {"held_out", held_out},
          {"examples", test_ids_.size(0)}}}};
    return vocab;
  }

  std::string description() const override {
    if (const auto groups = size_groups(); !groups.empty()) {
      std::vector<std::string> parts;
      for (const auto& group : groups) {
        parts.push_back(fmt::format("{} tokens: {} training, {} test", group.layout.size(),
                                    group.train_rows, group.test_rows));
      }
      return fmt::format("data {}: lines of {} lengths ({}){}, {} symbols, predicting {}",
                         config_.data, groups.size(), fmt::join(parts, "; "),
                         config_.test_data.empty() ? " (a seeded 10% of each length held out)"
                                                   : fmt::format(" (test: {})", config_.test_data),
                         vocabulary_.size(), span_.name);
    }
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
  torch::Tensor probe_ids_;  // lines of several lengths: the longest trained ones
  Layout probe_layout_;      // and their layout
  int64_t longest_ = 0;      // tokens of the longest line, trained or tested

  /// Data files whose lines have several lengths: each file read once per length of
  /// config.sized_layouts (lines of other lengths skipped), the vocabulary every TRAIN symbol,
  /// TEST (or a seeded 10% of each length of TRAIN) tested at each length.
  void read_sizes() {
    struct Read {
      tasks::SequenceFile train, test;
      Span span;
    };
    std::vector<Read> reads;
    std::vector<SizedData> sizes;
    std::set<std::string> symbols;
    std::unordered_set<std::string> written;
    for (const auto& [value, layout] : config_.sized_layouts) {
      Read read;
      read.span = tasks::predicted_span(layout, config_.predict, config_.layout_source);
      read.train = tasks::read_sequence_file(config_.data, layout, tasks::kMaxSequenceFileBytes,
                                             /*other_lengths_skipped=*/true);
      if (!config_.test_data.empty()) {
        read.test = tasks::read_sequence_file(config_.test_data, layout,
                                              tasks::kMaxSequenceFileBytes, true);
      }
      symbols.insert(read.train.symbols.begin(), read.train.symbols.end());
      const auto here = tasks::predicted_symbols(read.train, read.span);
      written.insert(here.begin(), here.end());
      reads.push_back(std::move(read));
    }
    vocabulary_.assign(symbols.begin(), symbols.end());  // sorted by their bytes
    size_t i = 0;
    for (const auto& [value, layout] : config_.sized_layouts) {
      Read& read = reads[i++];
      SizedData size;
      size.group.size = value;
      size.group.layout = layout;
      size.answer_offset = read.span.offset;
      size.answer_length = read.span.length;
      const auto length = layout.size();
      longest_ = std::max(longest_, length);
      torch::Tensor train_ids;
      if (read.train.examples() > 0) {
        train_ids = ids_tensor(
            tasks::encode_sequences(read.train, vocabulary_, config_.data, layout, read.span),
            length);
      }
      if (!config_.test_data.empty()) {
        if (read.test.examples() > 0) {
          tasks::check_predicted_symbols(read.test, written, config_.data, read.span);
          size.test_ids = ids_tensor(
              tasks::encode_sequences(read.test, vocabulary_, config_.data, layout, read.span),
              length);
        }
        size.train_ids = train_ids;
      } else if (read.train.examples() >= 2) {
        const auto split = tasks::hold_out(read.train.examples(), config_.seed, config_.data);
        size.train_ids = select_rows(train_ids, split.train);
        size.test_ids = select_rows(train_ids, split.test);
      } else {
        size.train_ids = train_ids;  // one example: trained, not tested
      }
      if (size.train_ids.defined()) {  // the longest trained
        probe_ids_ = size.train_ids;
        probe_layout_ = layout;
      }
      if (size.train_ids.defined() || size.test_ids.defined()) sizes.push_back(size);
    }
    bool tested = false;
    for (const auto& size : sizes) tested = tested || size.test_ids.defined();
    if (!probe_ids_.defined() || !tested) {
      throw InputError(
          fmt::format("data {}: {}", config_.data,
                      !probe_ids_.defined() ? "no line to train on" : "no line to test on"));
    }
    set_sized_data(std::move(sizes));
  }
};

}  // namespace

std::unique_ptr<Experiment> make_sequence_experiment(const ExperimentConfig& config) {
  return std::make_unique<SequenceExperiment>(config);
}

}  // namespace maskprior::runtime
