// The language family: a byte-level causal LM on the fortunes texts (tasks/text_corpus.h,
// docs/vision-language.md).
#include "tasks/families.h"
#include "tasks/text_corpus.h"

namespace maskprior::tasks {

namespace {

// quick: a 2-layer decoder on 8,000 windows of 65 bytes for 2 epochs (about a minute).
// paper: 6 layers of 256, the whole training split for 30 epochs.
const char* kPresets = R"({
  "quick": {"n": 64, "train_size": 8000, "test_size": 2000, "dim": 64, "depth": 2,
            "heads": 4, "head_dim": 16, "mlp": 256, "optimizer": "adamw", "lr": 2e-3,
            "weight_decay": 0.01, "epochs": 2, "batch_size": 32, "schedule": "cosine",
            "warmup": 20},
  "paper": {"n": 64, "train_size": 0, "test_size": 100000, "dim": 256, "depth": 6,
            "heads": 4, "head_dim": 64, "mlp": 1024, "optimizer": "adamw", "lr": 1e-3,
            "weight_decay": 0.01, "epochs": 30, "batch_size": 64, "schedule": "cosine",
            "warmup": 500}
})";

}  // namespace

TaskFamily language_family() {
  TaskFamily family;
  family.name = "language";
  family.title = "language";
  family.tasks = language_task_names();
  family.presets = nlohmann::json::parse(kPresets);
  family.metrics = {
      {"test_bpc", "test bits/char", "test bits per character", "bits/char", Better::kLower},
      {"test_loss", "test loss", "test loss", "", Better::kLower, false},
      {"test_perplexity", "test perplexity", "test perplexity", "", Better::kLower, false}};
  family.spec_params = {"n"};  // the context length
  family.own_settings = {"n", "train_size", "test_size", "data_dir"};
  family.suites = {{"language",
                    "fortunes-char on distance (n = 64): vanilla, mask-zero, mask, mask-fixed", 5,
                    init_runs(kFortunesTask, "specs/language/distance.mask",
                              {"vanilla", "mask-zero", "mask", "mask-fixed"})}};
  return family;
}

}  // namespace maskprior::tasks
