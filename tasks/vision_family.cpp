// The vision family: a ViT on Fashion-MNIST (tasks/fashion_mnist.h, docs/vision-language.md).
#include "tasks/families.h"
#include "tasks/fashion_mnist.h"

namespace maskprior::tasks {

namespace {

// quick: a 3-layer ViT (dim 64, 4 heads as local7x7) on a seeded 20,000-image subset for 2
//   epochs, tested on 5,000 images: under a minute of CPU time (docs/vision-language.md).
// paper: ViT-Tiny-like (dim 192, depth 12, MLP 768; 4 heads of 48 to match local7x7's 4 heads),
//   AdamW, cosine, 100 epochs with a 10-epoch warm-up, all 60,000 images.
const char* kPresets = R"({
  "quick": {"train_size": 20000, "test_size": 5000, "dim": 64, "depth": 3, "heads": 4,
            "head_dim": 16, "mlp": 128, "optimizer": "adamw", "lr": 2e-3,
            "weight_decay": 0.05, "epochs": 2, "batch_size": 128, "schedule": "cosine",
            "warmup": 20, "eval_every": 0},
  "paper": {"train_size": 0, "test_size": 10000, "dim": 192, "depth": 12, "heads": 4,
            "head_dim": 48, "mlp": 768, "optimizer": "adamw", "lr": 1e-3,
            "weight_decay": 0.05, "epochs": 100, "batch_size": 256, "schedule": "cosine",
            "warmup": 2350}
})";

}  // namespace

TaskFamily vision_family() {
  TaskFamily family;
  family.name = "vision";
  family.title = "vision";
  family.tasks = vision_task_names();
  family.presets = nlohmann::json::parse(kPresets);
  family.metrics = {{"top1", "top-1", "top-1", "%"},
                    {"test_loss", "test loss", "test loss", "", Better::kLower, false}};
  family.own_settings = {"train_size", "test_size", "data_dir"};
  family.suites = {{"vision",
                    "fashion-mnist ViT on local7x7: vanilla, mimetic, impulse, qk-svd, mask, "
                    "mask-fixed",
                    5,
                    init_runs(kFashionMnistTask, "specs/vision/local7x7.mask",
                              {"vanilla", "mimetic", "impulse", "qk-svd", "mask", "mask-fixed"})}};
  return family;
}

}  // namespace maskprior::tasks
