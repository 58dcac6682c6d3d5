#include "tasks/fashion_mnist.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "tasks/idx_file.h"

namespace maskprior::tasks {

namespace {

namespace fs = std::filesystem;

/// `data_dir/stem.gz`, or `data_dir/stem` when only the uncompressed file is there.
std::string find_file(const std::string& data_dir, const std::string& stem) {
  const fs::path dir = data_dir.empty() ? fs::path(kFashionMnistDir) : fs::path(data_dir);
  std::error_code error;
  for (const fs::path& candidate : {dir / (stem + ".gz"), dir / stem}) {
    if (fs::exists(candidate, error)) return candidate.string();
  }
  const std::string where =
      data_dir.empty()
          ? fmt::format(
                "install the Debian package {} (scripts/setup.sh) or point --data-dir at "
                "a folder that holds the Fashion-MNIST files",
                kFashionMnistPackage)
          : fmt::format("--data-dir {} does not hold the Fashion-MNIST files",
                        quote_input(data_dir));
  throw InputError(fmt::format("fashion-mnist: {} not found; {}",
                               quote_input((dir / (stem + ".gz")).string()), where));
}

ImageSet read_split(const std::string& data_dir, const std::string& prefix) {
  const std::string images_path = find_file(data_dir, prefix + "-images-idx3-ubyte");
  const std::string labels_path = find_file(data_dir, prefix + "-labels-idx1-ubyte");
  IdxArray images = read_idx_file(images_path);
  IdxArray labels = read_idx_file(labels_path);
  const auto bad = [](const std::string& path, const std::string& what) {
    return InputError(fmt::format("{} is not a Fashion-MNIST file: {}", quote_input(path), what));
  };
  if (images.dims.size() != 3 || images.dims[1] != kImageSide || images.dims[2] != kImageSide) {
    throw bad(images_path, fmt::format("expected images [rows, {}, {}], got {} dimensions",
                                       kImageSide, kImageSide, images.dims.size()));
  }
  if (labels.dims.size() != 1) {
    throw bad(labels_path,
              fmt::format("expected labels [rows], got {} dimensions", labels.dims.size()));
  }
  if (labels.dims[0] != images.dims[0]) {
    throw bad(labels_path, fmt::format("{} labels for {} images in {}", labels.dims[0],
                                       images.dims[0], quote_input(images_path)));
  }
  if (images.dims[0] == 0) throw bad(images_path, "no images");
  const auto top = std::max_element(labels.data.begin(), labels.data.end());
  if (*top >= kFashionMnistClasses) {
    throw bad(labels_path, fmt::format("label {} at row {} (expected 0 to {})", int{*top},
                                       top - labels.data.begin(), kFashionMnistClasses - 1));
  }
  return {images.dims[0], std::move(images.data), std::move(labels.data)};
}

}  // namespace

std::vector<std::string> vision_task_names() {
  return {kFashionMnistTask};
}

Layout fashion_mnist_layout() {
  Layout layout = make_layout({{"cls", 1}, {"p", kPatchGrid * kPatchGrid}});
  layout.spans[1].grid = std::pair{kPatchGrid, kPatchGrid};
  return layout;
}

const std::vector<std::string>& fashion_mnist_classes() {
  static const std::vector<std::string> kNames = {"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                                  "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                                  "Bag",         "Ankle boot"};
  return kNames;
}

FashionMnist read_fashion_mnist(const std::string& data_dir) {
  return {read_split(data_dir, "train"), read_split(data_dir, "t10k")};
}

}  // namespace maskprior::tasks
