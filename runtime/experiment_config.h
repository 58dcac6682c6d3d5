// The settings an experiment is built from (no LibTorch here: the training config and the CLI use
// it).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/layout.h"
#include "tasks/arithmetic_task.h"

namespace maskprior::runtime {

/// The settings of a run that an experiment reads: the task, its data, the model's sizes. The
/// training config (training::TrainConfig, train/config.h) extends them, so each default is
/// written here once.
struct ExperimentSettings {
  std::string task;   // parity2, maj3, cyclic3, threesym, addition, multiplication, ...
  uint64_t seed = 0;  // data sampling (maj3's training set, arithmetic splits)
  int n = 15;         // Boolean tasks: input bits; fortunes-char: context length
  // Boolean tasks: the points trained on, `seen` (the GOTU split's seen domain) or `all` (every
  // point of the cube: nothing is left unseen; tasks/boolean_task.h training_set).
  std::string train_domain = "seen";
  // Arithmetic tasks: share of problems trained on (addition's paper value unless set).
  double train_fraction = tasks::paper_train_fraction("addition");
  // Causal decoders (arithmetic, --data): the rows trained on, `answer` (those that predict the
  // answer span) or `all` (every next token); runtime/decoder.h.
  std::string loss_rows = "answer";
  // Arithmetic tasks: the digit order of the operands a, b and of the answer c in the sequence,
  // `msb` or `lsb` first (tasks/arithmetic_task.h).
  std::string operand_order = "msb";
  std::string answer_order = "lsb";
  // Arithmetic tasks: operand lengths trained on, one (`3`, the paper's) or a range (`1..10`),
  // and those tested ("" = the trained ones; e.g. `11,20,50`): tasks::parse_digit_sizes.
  std::string digits = "3";
  std::string test_digits;
  // Sequence data files instead of a task (docs/your-data.md): the spec defines the layout.
  std::string data;           // TRAIN: one example per line (tasks/sequence_file.h)
  std::string test_data;      // TEST; "" = a seeded 10% of TRAIN is held out
  std::string predict;        // the span of `layout` whose symbols the model predicts
  int64_t test_size = 10000;  // arithmetic: problems evaluated; vision, language: test rows
  // vision, language: training images or windows (0 = all); arithmetic beyond 3 digits or over
  // several sizes: problems per size (0 = tasks::kDefaultProblemsPerSize)
  int64_t train_size = 0;
  std::string data_dir;  // vision, language: where the data files are ("" = the package's)
  int64_t dim = 256;
  int64_t depth = 12;
  int64_t heads = 6;
  int64_t head_dim = 64;
  int64_t mlp = 256;
  // Architecture choices the paper leaves unstated (docs/settings.md); the defaults are maskc's
  // choices before they were settings, so old runs keep their meaning.
  std::string pos_embedding = "learned";  // learned | sinusoidal | none | rope | alibi
  double pos_init_std = 1.0;              // learned: initial values ~ N(0, pos_init_std²)
  std::string norm = "pre";               // LayerNorm placement: pre | post
  double attn_dropout = 0;                // dropout on the attention probabilities
  double resid_dropout = 0;               // dropout on each sublayer's output before its residual
  std::string activation = "gelu";        // the MLP's: gelu | relu
  std::string qk_norm = "none";           // none | layer: LayerNorm on each head's q and k
  double mlp_dropout = 0;                 // dropout on the MLP's hidden activations
  std::string qkv_bias = "no";            // yes | no: biases on Wq, Wk, Wv
  std::string attn_init = "default";      // default | torch (nn.MultiheadAttention's init)
  std::string final_norm = "yes";         // yes | no: a LayerNorm before the readout
};

/// What an experiment is built from: the run's settings and, for sequence data files, the layout
/// the spec gives them (not a setting: it comes from the spec).
struct ExperimentConfig : ExperimentSettings {
  Layout layout;              // the spec's layout
  std::string layout_source;  // the spec's path, for messages
  // Data files whose lines have different lengths (docs/your-data.md): the spec's layout at each
  // value of its length parameter that the files' lines need; empty when every line has the
  // length of `layout`.
  std::map<int64_t, Layout> sized_layouts;
};

}  // namespace maskprior::runtime
