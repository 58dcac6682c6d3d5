#include "runtime/language_experiment.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <numbers>
#include <random>

#include "core/error.h"
#include "tasks/random.h"
#include "tasks/text_corpus.h"

namespace maskprior::runtime {

namespace {

namespace F = torch::nn::functional;

/// Windows `picked` of `windows` (all when it lists every row).
torch::Tensor pick(const torch::Tensor& windows, const std::vector<int64_t>& picked) {
  return windows.index_select(0, torch::tensor(picked, torch::kLong)).contiguous();
}

/// Loss and next-byte accuracy of `forward` over windows [W, n + 1], by chunks.
std::pair<double, double> window_metrics(MaskedTransformer& model, const torch::Tensor& windows) {
  torch::NoGradGuard no_grad;
  const int64_t n = windows.size(1) - 1;
  double loss_sum = 0, right = 0;
  for (int64_t start = 0; start < windows.size(0); start += kEvalRows) {
    const auto chunk =
        windows.narrow(0, start, std::min(kEvalRows, windows.size(0) - start)).to(torch::kLong);
    const auto targets = chunk.narrow(1, 1, n);
    const auto logits = model->forward(chunk.narrow(1, 0, n));
    loss_sum += next_byte_loss(logits, targets).item<double>() * static_cast<double>(chunk.size(0));
    right += (logits.argmax(-1) == targets).sum().item<double>();
  }
  const auto rows = static_cast<double>(windows.size(0));
  return {loss_sum / rows, right / (rows * static_cast<double>(n))};
}

class LanguageExperiment : public Experiment {
 public:
  explicit LanguageExperiment(const ExperimentConfig& config) : n_(config.n) {
    if (n_ < 1) throw InputError(fmt::format("{}: n (the context) must be positive", kTask));
    const auto files = tasks::read_text_corpus(config.data_dir);
    const auto split = tasks::split_corpus(files, config.seed);
    const auto windows = [&](const std::vector<std::string>& names, const char* which) {
      auto w = text_windows(tasks::join_files(files, names), n_);
      if (w.size(0) == 0) {
        throw InputError(fmt::format(
            "{}: the {} split ({}) holds fewer than n + 1 = {} bytes; use a smaller --n or more "
            "text",
            kTask, which, fmt::join(names, ", "), n_ + 1));
      }
      return w;
    };
    const auto train_all = windows(split.train, "training");
    const auto validation_all = windows(split.validation, "validation");
    const auto test_all = windows(split.test, "test");
    train_ = pick(train_all, tasks::sample_rows(train_all.size(0), config.train_size, config.seed));
    validation_ =
        pick(validation_all, tasks::spaced_rows(validation_all.size(0), config.test_size));
    test_ = pick(test_all, tasks::spaced_rows(test_all.size(0), config.test_size));
    info_ = {{"train_files", split.train},
             {"validation_files", split.validation},
             {"test_files", split.test},
             {"train_windows", train_.size(0)},
             {"train_windows_available", train_all.size(0)},
             {"validation_windows", validation_.size(0)},
             {"test_windows", test_.size(0)},
             {"test_windows_available", test_all.size(0)},
             {"context", n_}};
    info_["note"] = fmt::format(
        "{}: {} files for training, {} for validation, {} for testing (split by seed {}); "
        "training on {} of {} windows of {} bytes{}, testing on {} of {}; characters are bytes",
        kTask, split.train.size(), split.validation.size(), split.test.size(), config.seed,
        train_.size(0), train_all.size(0), n_ + 1,
        train_.size(0) < train_all.size(0) ? " (a seeded subset)" : "", test_.size(0),
        test_all.size(0));
  }

  Layout layout() const override { return make_layout({{"t", n_}}); }

  ModelConfig model_config(const ExperimentConfig& config) const override {
    return sized_model_config(config, tasks::kByteVocab, n_, Readout::kCausalLm);
  }

  int64_t train_size() const override { return train_.size(0); }

  Batch train_batch(const torch::Tensor& rows) const override {
    const auto windows = train_.index_select(0, rows.to(train_.device())).to(torch::kLong);
    return {windows.narrow(1, 0, n_), windows.narrow(1, 1, n_)};
  }

  torch::Tensor loss(const torch::Tensor& output, const Batch& batch) const override {
    return next_byte_loss(output, batch.targets);
  }

  nlohmann::json evaluate(MaskedTransformer& model) const override {
    const auto [test_loss, test_accuracy] = window_metrics(model, test_);
    const auto [validation_loss, validation_accuracy] = window_metrics(model, validation_);
    return {{"test_loss", test_loss},
            {"test_bpc", test_loss / std::numbers::ln2},
            {"test_perplexity", std::exp(test_loss)},
            {"test_accuracy", test_accuracy},
            {"validation_loss", validation_loss},
            {"validation_bpc", validation_loss / std::numbers::ln2},
            {"train_size", train_.size(0)},
            {"test_size", test_.size(0)}};
  }

  TestRows test_rows() const override {
    const auto windows = test_.to(torch::kCPU, torch::kLong);
    return {{{"inputs", windows.narrow(1, 0, n_)}, {"targets", windows.narrow(1, 1, n_)}},
            {{"loss", "next_token"}}};
  }

  torch::Tensor probe_inputs(int64_t size) const override {
    const auto rows = tasks::spaced_rows(test_.size(0), size);
    return pick(test_.to(torch::kCPU), rows).narrow(1, 0, n_).to(torch::kLong);
  }

  nlohmann::json data_info() const override { return info_; }

  void to(torch::Device device) override {
    for (auto* t : {&train_, &validation_, &test_}) *t = t->to(device);
  }

 private:
  static constexpr const char* kTask = tasks::kFortunesTask;
  int64_t n_;
  torch::Tensor train_, validation_, test_;  // uint8 windows [W, n + 1]
  nlohmann::json info_;
};

}  // namespace

torch::Tensor text_windows(const std::string& text, int64_t n) {
  if (n < 1) throw InternalError("text_windows: n must be positive");
  const int64_t count = text.empty() ? 0 : (static_cast<int64_t>(text.size()) - 1) / n;
  auto windows = torch::empty({count, n + 1}, torch::kByte);
  auto* out = windows.data_ptr<uint8_t>();
  for (int64_t w = 0; w < count; ++w) {
    std::copy_n(reinterpret_cast<const uint8_t*>(text.data()) + w * n, n + 1, out + w * (n + 1));
  }
  return windows;
}

torch::Tensor next_byte_loss(const torch::Tensor& logits, const torch::Tensor& targets) {
  return F::cross_entropy(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}));
}

std::unique_ptr<Experiment> make_language_experiment(const ExperimentConfig& config) {
  return std::make_unique<LanguageExperiment>(config);
}

}  // namespace maskprior::runtime
