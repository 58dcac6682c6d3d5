#include "train/presets.h"

#include <fmt/format.h>

#include "core/error.h"
#include "tasks/arithmetic_task.h"
#include "tasks/boolean_task.h"
#include "tasks/fashion_mnist.h"
#include "tasks/task_names.h"
#include "tasks/text_corpus.h"

namespace maskprior::training {

namespace {

using nlohmann::json;

// family or task -> preset -> TrainConfig keys. A task's row is merged over its family's row.
// boolean quick: a small model that finishes in a few minutes on 2 CPU cores.
// boolean paper: PAPER.md, Boolean GOTU reference settings (Abbe et al.'s model, Adam, batch 256).
// arithmetic quick: a small decoder that finishes in well under 5 minutes on 2 CPU cores
//   (docs/arithmetic.md): about 1,600 (addition) or 1,900 (multiplication) steps of batch 64.
// arithmetic paper: PAPER.md, "Arithmetic (low data)". Both arithmetic presets also set the
//   paper's train fraction (addition 0.4% of the problems, multiplication 3%).
// sequence-data (--data): arithmetic's decoder and optimiser. Quick runs 1,500 steps of batch 64
//   whatever the data's size (addition's quick run is about 1,600 steps): a few minutes on 2 CPU
//   cores for sequences about as long as arithmetic's (docs/your-data.md).
// truth-table (--truth-table): the Boolean tasks' model and optimiser. Quick runs 1,000 steps of
//   batch 256 (parity2's table on 15 bits: about 10 epochs), evaluating every 100 steps; paper
//   takes parity2's learning rate and epochs. (--epochs on the command line replaces a preset's
//   steps: resolve_config in train/config.cpp.)
// vision quick: a 3-layer ViT (dim 64, 4 heads as local7x7) on a seeded 20,000-image subset for 2
//   epochs, tested on 5,000 images: under a minute of CPU time (docs/vision-language.md).
// vision paper: ViT-Tiny-like (dim 192, depth 12, MLP 768; 4 heads of 48 to match local7x7's 4
//   heads), AdamW, cosine, 100 epochs with a 10-epoch warm-up, all 60,000 images.
// language quick: a 2-layer decoder on 8,000 windows of 65 bytes for 2 epochs (about a minute).
// language paper: 6 layers of 256, the whole training split for 30 epochs.
const json& preset_table() {
  static const json kTable = json::parse(R"({
    "boolean": {
      "quick": {"n": 15, "dim": 64, "depth": 2, "heads": 2, "head_dim": 16, "mlp": 64,
                "lr": 1e-3, "epochs": 5, "batch_size": 256, "optimizer": "adam",
                "weight_decay": 1e-3, "schedule": "constant", "warmup": 0},
      "paper": {"n": 15, "dim": 256, "depth": 12, "heads": 6, "head_dim": 64, "mlp": 256,
                "optimizer": "adam", "weight_decay": 1e-3, "batch_size": 256,
                "schedule": "constant", "warmup": 0}
    },
    "parity2": {"paper": {"lr": 1e-5, "epochs": 20}},
    "maj3": {"paper": {"lr": 1e-5, "epochs": 30}},
    "cyclic3": {"paper": {"lr": 2e-5, "epochs": 80}},
    "threesym": {"paper": {"lr": 2e-5, "epochs": 40}},
    "arithmetic": {
      "quick": {"test_size": 10000, "dim": 64, "depth": 2, "heads": 4, "head_dim": 16,
                "mlp": 256, "optimizer": "adamw", "lr": 1e-3, "weight_decay": 1e-3,
                "batch_size": 64, "schedule": "cosine", "warmup": 0, "eval_every": 500},
      "paper": {"test_size": 10000, "dim": 256, "depth": 6, "heads": 4, "head_dim": 64,
                "mlp": 256, "optimizer": "adamw", "lr": 1e-3, "weight_decay": 1e-3,
                "epochs": 50, "batch_size": 256, "schedule": "cosine", "warmup": 0}
    },
    "sequence-data": {
      "quick": {"dim": 64, "depth": 2, "heads": 4, "head_dim": 16, "mlp": 256,
                "optimizer": "adamw", "lr": 1e-3, "weight_decay": 1e-3, "steps": 1500,
                "batch_size": 64, "schedule": "cosine", "warmup": 0, "eval_every": 500},
      "paper": {"dim": 256, "depth": 6, "heads": 4, "head_dim": 64, "mlp": 256,
                "optimizer": "adamw", "lr": 1e-3, "weight_decay": 1e-3, "epochs": 50,
                "batch_size": 256, "schedule": "cosine", "warmup": 0}
    },
    "truth-table": {
      "quick": {"dim": 64, "depth": 2, "heads": 2, "head_dim": 16, "mlp": 64, "lr": 1e-3,
                "steps": 1000, "eval_every": 100, "batch_size": 256,
                "optimizer": "adam", "weight_decay": 1e-3, "schedule": "constant", "warmup": 0},
      "paper": {"dim": 256, "depth": 12, "heads": 6, "head_dim": 64, "mlp": 256,
                "optimizer": "adam", "lr": 1e-5, "epochs": 20, "weight_decay": 1e-3,
                "batch_size": 256, "schedule": "constant", "warmup": 0}
    },
    "addition": {"quick": {"epochs": 25}},
    "multiplication": {"quick": {"epochs": 4}},
    "vision": {
      "quick": {"train_size": 20000, "test_size": 5000, "dim": 64, "depth": 3, "heads": 4,
                "head_dim": 16, "mlp": 128, "optimizer": "adamw", "lr": 2e-3,
                "weight_decay": 0.05, "epochs": 2, "batch_size": 128, "schedule": "cosine",
                "warmup": 20, "eval_every": 0},
      "paper": {"train_size": 0, "test_size": 10000, "dim": 192, "depth": 12, "heads": 4,
                "head_dim": 48, "mlp": 768, "optimizer": "adamw", "lr": 1e-3,
                "weight_decay": 0.05, "epochs": 100, "batch_size": 256, "schedule": "cosine",
                "warmup": 2350}
    },
    "language": {
      "quick": {"n": 64, "train_size": 8000, "test_size": 2000, "dim": 64, "depth": 2,
                "heads": 4, "head_dim": 16, "mlp": 256, "optimizer": "adamw", "lr": 2e-3,
                "weight_decay": 0.01, "epochs": 2, "batch_size": 32, "schedule": "cosine",
                "warmup": 20},
      "paper": {"n": 64, "train_size": 0, "test_size": 100000, "dim": 256, "depth": 6,
                "heads": 4, "head_dim": 64, "mlp": 1024, "optimizer": "adamw", "lr": 1e-3,
                "weight_decay": 0.01, "epochs": 30, "batch_size": 64, "schedule": "cosine",
                "warmup": 500}
    }
  })");
  return kTable;
}

std::string family_of(const std::string& task) {
  if (task == kSequenceDataPresets || task == kTruthTablePresets) return task;
  if (tasks::is_boolean_task(task)) return "boolean";
  if (tasks::is_arithmetic_task(task)) return "arithmetic";
  if (tasks::is_vision_task(task)) return "vision";
  if (tasks::is_language_task(task)) return "language";
  throw tasks::unknown_task(task);
}

}  // namespace

std::vector<std::string> preset_names() {
  return {kPresetQuick, kPresetPaper};
}

json task_preset(const std::string& task, const std::string& preset) {
  const json& table = preset_table();
  const json& family = table.at(family_of(task));
  if (!family.contains(preset)) {
    throw InputError(
        fmt::format("unknown preset '{}' (expected {} or {})", preset, kPresetQuick, kPresetPaper));
  }
  json settings = family.at(preset);
  // Both arithmetic presets train on the paper's share of problems (tasks/arithmetic_task.h).
  if (tasks::is_arithmetic_task(task))
    settings["train_fraction"] = tasks::paper_train_fraction(task);
  settings.update(table.value(task, json::object()).value(preset, json::object()));
  return settings;
}

}  // namespace maskprior::training
