// `maskc distill`: from a finished run back to a spec — what its model attends to, or the M it
// learned, written in the .mask language (compiler/write_spec.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace maskprior::training {

struct DistillOptions {
  /// "attention": the trained model's attention maps over the run's probe rows (the fixed rows
  /// its attention metrics read), averaged per layer and head; "mask": the learned M.
  std::string from = "attention";
  int64_t rows = 256;  // probe rows to average (attention)
  /// attention: each query row keeps the fewest keys that hold this share of its attention.
  double mass = 0.9;
  /// "head": one pattern per layer and head; "layer": the union of a layer's heads; "model": the
  /// union of every layer and head.
  std::string per = "head";
};

/// What distill_run made.
struct Distillation {
  std::string spec;                // the .mask text
  std::vector<double> layer_mass;  // attention: the share of each layer's attention on the
                                   // pattern written for it (mean over rows and heads; a causal
                                   // decoder's last row, which predicts no token, left out)
  bool last_row_left_out = false;  // attention: the model is a causal decoder
  int64_t rows = 0;                // probe rows averaged (attention)
  std::string no_prior;  // set when every cell the hard mask leaves is open: says so, and why
};

/// The spec of run folder `run_dir`'s attention or learned M. InputError (nothing written) for a
/// folder that holds no run, an unfinished run, one whose config this maskc cannot read (another
/// version), or that lacks the file the source needs (weights.safetensors; mask.safetensors,
/// which runs without a mask lack). Paths in its config (data files, a tensor spec) are read as
/// they were written, relative to the current folder; the .mask spec is the folder's copy.
Distillation distill_run(const std::string& run_dir, const DistillOptions& options);

/// The pattern [L, H, N, N] of attention maps [L, H, N, N] (rows sum to 1): in each row, the
/// fewest keys (largest first) whose attention sums to at least `mass` of the row's.
std::vector<uint8_t> mass_pattern(const std::vector<float>& attention, int64_t n, double mass);

}  // namespace maskprior::training
