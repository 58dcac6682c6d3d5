// Fashion-MNIST (Xiao et al.): 28×28 grey images of 10 kinds of clothing, 60,000 for training and
// 10,000 for testing, as the Debian package `dataset-fashion-mnist` ships them (four gzipped IDX
// files). The task `fashion-mnist` cuts an image into 4×4 patches on a 7×7 grid and prepends a
// CLS token: the layout `cls, p[49]` with `grid p 7 x 7` of specs/vision/local7x7.mask (N = 50).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/layout.h"

namespace maskprior::tasks {

inline constexpr const char* kFashionMnistTask = "fashion-mnist";
inline constexpr const char* kFashionMnistPackage = "dataset-fashion-mnist";
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
inline constexpr int64_t kImageSide = 28;
inline constexpr int64_t kPatchSide = 4;
inline constexpr int64_t kPatchGrid = kImageSide / kPatchSide;  // 7
inline constexpr int64_t kFashionMnistClasses = 10;

/// Images [rows, side, side] (row-major bytes, 0 = background) and their labels 0..9.
struct ImageSet {
  int64_t rows = 0;
  std::vector<uint8_t> pixels;
  std::vector<uint8_t> labels;
};

struct FashionMnist {
  ImageSet train, test;
};

/// The vision tasks by name (fashion-mnist).
std::vector<std::string> vision_task_names();

/// `cls, p[49]` with p on a 7×7 grid.
Layout fashion_mnist_layout();

/// The names of the ten classes, by label.
const std::vector<std::string>& fashion_mnist_classes();

/// Reads the four files {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] from `data_dir`
/// ("" = the Debian package's folder). A missing file is an InputError naming it, the package and
/// --data-dir; a corrupt one (not gzip, not IDX, not 28×28 images, labels ≥ 10, counts that
/// disagree) an InputError naming the file and what is wrong.
FashionMnist read_fashion_mnist(const std::string& data_dir);

}  // namespace maskprior::tasks
