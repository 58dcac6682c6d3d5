#include "runtime/vision_experiment.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "core/error.h"
#include "tasks/fashion_mnist.h"
#include "tasks/random.h"

namespace maskprior::runtime {

namespace {

namespace F = torch::nn::functional;
using tasks::kImageSide;
using tasks::kPatchGrid;
using tasks::kPatchSide;

inline constexpr uint64_t kAugmentSalt = 0xa09'3e7'5a17ULL;

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Images [rows, 28, 28] uint8 of `set` at `rows`.
torch::Tensor image_tensor(const tasks::ImageSet& set, const std::vector<int64_t>& rows) {
  const int64_t pixels = kImageSide * kImageSide;
  auto out =
      torch::empty({static_cast<int64_t>(rows.size()), kImageSide, kImageSide}, torch::kByte);
  auto* data = out.data_ptr<uint8_t>();
  for (size_t i = 0; i < rows.size(); ++i) {
    std::copy_n(set.pixels.begin() + rows[i] * pixels, pixels,
                data + static_cast<int64_t>(i) * pixels);
  }
  return out;
}

torch::Tensor label_tensor(const tasks::ImageSet& set, const std::vector<int64_t>& rows) {
  std::vector<int64_t> labels;
  for (int64_t r : rows) labels.push_back(set.labels[static_cast<size_t>(r)]);
  return torch::tensor(labels, torch::kLong);
}

class VisionExperiment : public Experiment {
 public:
  explicit VisionExperiment(const ExperimentConfig& config) : seed_(config.seed) {
    const tasks::FashionMnist data = tasks::read_fashion_mnist(config.data_dir);
    const auto train_rows = tasks::sample_rows(data.train.rows, config.train_size, config.seed);
    const auto test_rows = tasks::spaced_rows(data.test.rows, config.test_size);
    train_images_ = image_tensor(data.train, train_rows);
    train_labels_ = label_tensor(data.train, train_rows);
    const auto scaled = train_images_.to(torch::kDouble) / 255.0;
    mean_ = scaled.mean().item<double>();
    std_ = std::max(scaled.std().item<double>(), 1e-6);
    test_patches_ = normalised_patches(image_tensor(data.test, test_rows));
    test_labels_ = label_tensor(data.test, test_rows);
    info_ = {{"train_images", train_rows.size()},
             {"train_images_available", data.train.rows},
             {"test_images", test_rows.size()},
             {"test_images_available", data.test.rows},
             {"pixel_mean", mean_},
             {"pixel_std", std_}};
    info_["note"] = fmt::format(
        "fashion-mnist: training on {} of {} images{}, testing on {} of {}; 4×4 patches on a "
        "7×7 grid; shifts ≤ {} px and left-right flips",
        train_rows.size(), data.train.rows,
        static_cast<int64_t>(train_rows.size()) < data.train.rows ? " (a seeded subset)" : "",
        test_rows.size(), data.test.rows, kMaxShift);
  }

  Layout layout() const override { return tasks::fashion_mnist_layout(); }

  ModelConfig model_config(const ExperimentConfig& config) const override {
    auto model =
        sized_model_config(config, /*vocab=*/1, 1 + kPatchGrid * kPatchGrid, Readout::kClsClassify);
    model.classes = tasks::kFashionMnistClasses;
    model.patch_features = kPatchSide * kPatchSide;
    return model;
  }

  int64_t train_size() const override { return train_images_.size(0); }

  Batch train_batch(const torch::Tensor& rows) const override {
    const auto cpu_rows = rows.to(torch::kCPU, torch::kLong).contiguous();
    const auto* r = cpu_rows.data_ptr<int64_t>();
    // The draws depend on the seed and the batch's rows, so a resumed run repeats them exactly
    // and an image gets other shifts in other epochs (it shares a batch with other images).
    uint64_t key = splitmix64(seed_ ^ kAugmentSalt);
    for (int64_t i = 0; i < cpu_rows.numel(); ++i)
      key = splitmix64(key ^ static_cast<uint64_t>(r[i]));
    std::mt19937_64 engine(key);
    const int64_t batch = cpu_rows.numel();
    std::vector<int64_t> shifts, flips;
    for (int64_t i = 0; i < batch; ++i) {
      for (int d = 0; d < 2; ++d) {
        shifts.push_back(static_cast<int64_t>(tasks::uniform_below(engine, 2 * kMaxShift + 1)) -
                         kMaxShift);
      }
      flips.push_back(static_cast<int64_t>(tasks::uniform_below(engine, 2)));
    }
    const auto device = train_images_.device();
    const auto index = cpu_rows.to(device);
    auto images = shift_and_flip(train_images_.index_select(0, index),
                                 torch::tensor(shifts, torch::kLong).view({batch, 2}).to(device),
                                 torch::tensor(flips, torch::kLong).to(torch::kBool).to(device));
    return {normalised_patches(images), train_labels_.index_select(0, index)};
  }

  torch::Tensor loss(const torch::Tensor& output, const Batch& batch) const override {
    return F::cross_entropy(output, batch.targets);
  }

  nlohmann::json evaluate(MaskedTransformer& model) const override {
    const auto logits = map_in_chunks(test_patches_, kEvalRows,
                                      [&](const torch::Tensor& x) { return model->forward(x); });
    const double loss = F::cross_entropy(logits, test_labels_).item<double>();
    const double top1 = (logits.argmax(1) == test_labels_).to(torch::kDouble).mean().item<double>();
    return {{"top1", top1},
            {"test_loss", loss},
            {"train_size", train_size()},
            {"test_size", test_labels_.size(0)}};
  }

  TestRows test_rows() const override {
    return {{{"inputs", test_patches_.to(torch::kCPU)}, {"targets", test_labels_.to(torch::kCPU)}},
            {{"loss", "cross_entropy"}}};
  }

  torch::Tensor probe_inputs(int64_t size) const override {
    const auto rows = tasks::spaced_rows(test_patches_.size(0), size);
    return test_patches_
        .index_select(0, torch::tensor(rows, torch::kLong).to(test_patches_.device()))
        .to(torch::kCPU);
  }

  nlohmann::json data_info() const override { return info_; }

  void to(torch::Device device) override {
    for (auto* t : {&train_images_, &train_labels_, &test_patches_, &test_labels_}) {
      *t = t->to(device);
    }
  }

 private:
  /// Pixels scaled to [0, 1], standardised, cut into patches.
  torch::Tensor normalised_patches(const torch::Tensor& images) const {
    return image_patches((images.to(torch::kFloat) / 255.0 - mean_) / std_);
  }

  uint64_t seed_;
  double mean_ = 0, std_ = 1;
  torch::Tensor train_images_, train_labels_;  // uint8 [R, 28, 28], int64 [R]
  torch::Tensor test_patches_, test_labels_;   // float [T, 49, 16], int64 [T]
  nlohmann::json info_;
};

}  // namespace

torch::Tensor image_patches(const torch::Tensor& images) {
  if (images.dim() != 3 || images.size(1) != kImageSide || images.size(2) != kImageSide) {
    throw InputError(fmt::format("[image_patches] expected images [B, {}, {}], got {} dimensions",
                                 kImageSide, kImageSide, images.dim()));
  }
  return images.to(torch::kFloat)
      .reshape({images.size(0), kPatchGrid, kPatchSide, kPatchGrid, kPatchSide})
      .permute({0, 1, 3, 2, 4})
      .reshape({images.size(0), kPatchGrid * kPatchGrid, kPatchSide * kPatchSide});
}

torch::Tensor shift_and_flip(const torch::Tensor& images, const torch::Tensor& shifts,
                             const torch::Tensor& flips) {
  using torch::indexing::Slice;
  const int64_t batch = images.size(0), height = images.size(1), width = images.size(2);
  if (shifts.numel() > 0 && shifts.abs().max().item<int64_t>() > kMaxShift) {
    throw InputError(fmt::format("[shift_and_flip] a shift is larger than {} pixels", kMaxShift));
  }
  const auto options = torch::TensorOptions().dtype(torch::kLong).device(images.device());
  auto padded = F::pad(images.to(torch::kFloat),
                       F::PadFuncOptions({kMaxShift, kMaxShift, kMaxShift, kMaxShift}));
  auto i = torch::arange(height, options).view({1, height});
  auto j = torch::arange(width, options).view({1, width});
  auto dy = shifts.index({Slice(), 0}).view({batch, 1});
  auto dx = shifts.index({Slice(), 1}).view({batch, 1});
  auto source_j = torch::where(flips.view({batch, 1}), (width - 1) - j, j);
  auto rows = (i - dy + kMaxShift).view({batch, height, 1});
  auto cols = (source_j - dx + kMaxShift).view({batch, 1, width});
  auto b = torch::arange(batch, options).view({batch, 1, 1});
  return padded.index({b, rows, cols});
}

std::unique_ptr<Experiment> make_vision_experiment(const ExperimentConfig& config) {
  return std::make_unique<VisionExperiment>(config);
}

}  // namespace maskprior::runtime
