// Image classification with a ViT (task fashion-mnist, tasks/fashion_mnist.h): each 28×28 image
// becomes 49 patches of 4×4 pixels on a 7×7 grid, fed as float features [49, 16] to a model with
// patch inputs and a CLS readout (ModelConfig::patch_features, Readout::kClsClassify), trained
// with cross-entropy. Training images are augmented: shifted by up to kMaxShift pixels in each
// direction (zero fill) and flipped left-right with probability ½, drawn from the run's seed and
// the batch's rows, so a resumed run sees the same augmented batches. Pixels are scaled to [0, 1]
// and standardised with the training images' mean and standard deviation.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>

#include "runtime/experiment.h"

namespace maskprior::runtime {

/// Largest shift of the augmentation, in pixels.
inline constexpr int64_t kMaxShift = 2;

/// Images [B, 28, 28] (any dtype) → patches [B, 49, 16] (float): patch (p, q) of the 7×7 grid is
/// row p·7 + q, its pixels in row-major order.
torch::Tensor image_patches(const torch::Tensor& images);

/// Images [B, H, W] shifted and flipped, as float: output pixel (i, j) of image b is input pixel
/// (i − dy_b, j' − dx_b), j' = W − 1 − j when flips[b] else j, and 0 where that lies off the
/// image. shifts [B, 2] (dy, dx) int64 with |dy|, |dx| ≤ kMaxShift; flips [B] bool.
torch::Tensor shift_and_flip(const torch::Tensor& images, const torch::Tensor& shifts,
                             const torch::Tensor& flips);

/// fashion-mnist: training set = config.train_size images (0 = all 60,000; a seeded sample
/// otherwise), test set = config.test_size evenly spaced test images (at most 10,000), read from
/// config.data_dir ("" = the Debian package). Metrics: top1, test_loss.
std::unique_ptr<Experiment> make_vision_experiment(const ExperimentConfig& config);

}  // namespace maskprior::runtime
