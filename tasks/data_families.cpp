// The families of your own data (docs/your-data.md): sequences (`maskc train --data`), trained as
// arithmetic's causal decoder, and truth tables (`--truth-table`), trained as the Boolean tasks.
// They have no built-in task; a run belongs to one when it gives its input key.
#include "tasks/families.h"

namespace maskprior::tasks {

namespace {

// quick: arithmetic's decoder and optimiser, 1,500 steps of batch 64 whatever the data's size
//   (addition's quick run is about 1,600 steps): a few minutes on 2 CPU cores for sequences about
//   as long as arithmetic's (docs/your-data.md).
// paper: arithmetic's paper settings.
const char* kSequencePresets = R"({
  "quick": {"dim": 64, "depth": 2, "heads": 4, "head_dim": 16, "mlp": 256,
            "optimizer": "adamw", "lr": 1e-3, "weight_decay": 1e-3, "steps": 1500,
            "batch_size": 64, "schedule": "cosine", "warmup": 0, "eval_every": 500},
  "paper": {"dim": 256, "depth": 6, "heads": 4, "head_dim": 64, "mlp": 256,
            "optimizer": "adamw", "lr": 1e-3, "weight_decay": 1e-3, "epochs": 50,
            "batch_size": 256, "schedule": "cosine", "warmup": 0}
})";

// quick: the Boolean tasks' model and optimiser, 1,000 steps of batch 256 (parity2's table on 15
//   bits: about 10 epochs), evaluating every 100 steps. paper: parity2's learning rate and
//   epochs. (--epochs on the command line replaces a preset's steps: resolve_config in
//   train/config.cpp.)
const char* kTruthTablePresets = R"({
  "quick": {"dim": 64, "depth": 2, "heads": 2, "head_dim": 16, "mlp": 64, "lr": 1e-3,
            "steps": 1000, "eval_every": 100, "batch_size": 256,
            "optimizer": "adam", "weight_decay": 1e-3, "schedule": "constant", "warmup": 0},
  "paper": {"dim": 256, "depth": 12, "heads": 6, "head_dim": 64, "mlp": 256,
            "optimizer": "adam", "lr": 1e-5, "epochs": 20, "weight_decay": 1e-3,
            "batch_size": 256, "schedule": "constant", "warmup": 0}
})";

}  // namespace

TaskFamily sequence_data_family() {
  TaskFamily family;
  family.name = "sequence-data";
  family.title = "your sequences";
  family.input_key = "data";
  family.presets = nlohmann::json::parse(kSequencePresets);
  family.metrics = decoder_metrics("token");
  family.own_settings = {"loss_rows", "test_data", "predict"};
  return family;
}

TaskFamily truth_table_family() {
  TaskFamily family;
  family.name = "truth-table";
  family.title = "your truth table";
  family.input_key = "truth_table";
  family.presets = nlohmann::json::parse(kTruthTablePresets);
  family.metrics = boolean_metrics();
  family.judged_by = "unseen_accuracy";  // when the table has unseen rows (else the headline)
  return family;
}

}  // namespace maskprior::tasks
