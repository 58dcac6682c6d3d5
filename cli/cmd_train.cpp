// `maskc train`: builds a TrainConfig from a preset and flags, or resumes a run folder.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/spec_flags.h"
#include "runtime/init.h"
#include "train/presets.h"
#include "train/train.h"

namespace maskprior::cli {

namespace {

inline constexpr int kExitInterrupted = 130;  // 128 + SIGINT, the shell's convention

/// The parsed flags: values land in `config`; `given` remembers which TrainConfig key each
/// option sets, so that only flags the user typed override the preset.
struct TrainFlags {
  training::TrainConfig config;
  std::vector<std::pair<CLI::Option*, std::string>> given;
  SpecFlags spec_flags;  // -D NAME=VALUE, parsed and checked as by compile/show/validate
  std::string resume;
  bool quiet = false;
  bool json = false;
};

template <class T>
CLI::Option* add_flag(CLI::App* cmd, TrainFlags& flags, const std::string& names,
                      const std::string& key, T& value, const std::string& help) {
  auto* option = cmd->add_option(names, value, help);
  flags.given.emplace_back(option, key);
  return option;
}

nlohmann::json overrides_of(const TrainFlags& flags) {
  const auto all = training::to_json(flags.config);
  nlohmann::json overrides = nlohmann::json::object();
  for (const auto& [option, key] : flags.given) {
    if (option->count() > 0) overrides[key] = all.at(key);
  }
  return overrides;
}

void print_summary(const nlohmann::json& summary, const std::string& out) {
  auto number = [&](const char* key) {
    return summary.contains(key) && summary[key].is_number()
               ? fmt::format("{:.4f}", summary[key].get<double>())
               : std::string("-");
  };
  auto list = [&](const char* key) {
    if (!summary.contains(key)) return std::string("-");
    std::vector<std::string> parts;
    for (const auto& v : summary[key]) parts.push_back(fmt::format("{:.3f}", v.get<double>()));
    return fmt::format("[{}]", fmt::join(parts, ", "));
  };
  const std::string head = fmt::format("{} {} seed {}", summary.value("task", ""),
                                       summary.value("init", ""), summary.value("seed", 0));
  if (summary.contains("sequence_accuracy")) {  // arithmetic
    std::cout << fmt::format(
        "{}: sequence accuracy {}, digit accuracy {}, test loss {}, train loss {}\n", head,
        number("sequence_accuracy"), number("digit_accuracy"), number("test_loss"),
        number("train_loss"));
  } else {
    std::cout << fmt::format(
        "{}: accuracy {} (unseen {}), seen mse {}, unseen mse {}, train loss {}\n", head,
        number("accuracy"), number("unseen_accuracy"), number("seen_mse"), number("unseen_mse"),
        number("train_loss"));
  }
  std::cout << fmt::format("prior mass per layer: {} at step 0, {} at the end\n",
                           list("prior_mass_init"), list("prior_mass"));
  if (summary.contains("mask_drift")) {
    std::cout << fmt::format("mask drift per layer: {}\n", list("mask_drift"));
  }
  std::cout << fmt::format("{} steps in {:.1f} s{}\n", summary.value("steps", 0),
                           summary.value("wall_seconds", 0.0),
                           out.empty() ? "" : "; run folder " + out);
}

}  // namespace

void add_train_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "train",
      "Train a masked Transformer on a task with a spec's prior.\n"
      "  maskc train --task parity2 --spec specs/gotu/parity2.mask --init mask --preset quick "
      "--out runs/m\n"
      "  maskc train --resume runs/m");
  auto flags = std::make_shared<TrainFlags>();
  auto& c = flags->config;
  auto& f = *flags;

  add_flag(cmd, f, "--task", "task", c.task, "task: parity2, maj3, cyclic3, threesym, ...");
  add_flag(cmd, f, "--spec", "spec", c.spec,
           "prior: a .mask file (compiled now) or a .safetensors mask file; optional for vanilla, "
           "mask-zero and mimetic (then it only defines the pattern the metrics measure)");
  add_flag(cmd, f, "--init", "init", c.init, "initialisation (default vanilla)")
      ->check(CLI::IsMember(runtime::init_method_names()));
  auto* preset = cmd->add_option("--preset", c.preset,
                                 "quick (small, minutes on a CPU) or paper (PAPER.md settings); "
                                 "any other flag overrides it")
                     ->check(CLI::IsMember({training::kPresetQuick, training::kPresetPaper}));
  add_flag(cmd, f, "--mask-open", "mask_open", c.mask_open,
           "override the .mask spec's open value (like maskc compile --open; 0 = the spec's)");
  add_flag(cmd, f, "--mask-close", "mask_close", c.mask_close,
           "override the .mask spec's close value (like maskc compile --close; 0 = the spec's)");
  add_flag(cmd, f, "--seed", "seed", c.seed, "seed: model init and data order (default 0)");
  add_flag(cmd, f, "--out", "out", c.out, "run folder for config, metrics, weights, checkpoints");
  add_flag(cmd, f, "--n", "n", c.n, "Boolean tasks: number of input bits (default 15)");
  add_flag(cmd, f, "--train-fraction", "train_fraction", c.train_fraction,
           "arithmetic tasks: share of problems trained on");
  add_flag(cmd, f, "--test-size", "test_size", c.test_size, "arithmetic tasks: test problems");
  add_flag(cmd, f, "--dim", "dim", c.dim, "model width");
  add_flag(cmd, f, "--depth", "depth", c.depth, "layers");
  add_flag(cmd, f, "--heads", "heads", c.heads, "attention heads");
  add_flag(cmd, f, "--head-dim", "head_dim", c.head_dim, "width of one head");
  add_flag(cmd, f, "--mlp", "mlp", c.mlp, "MLP hidden width");
  add_flag(cmd, f, "--optimizer", "optimizer", c.optimizer, "adam | adamw")
      ->check(CLI::IsMember({"adam", "adamw"}));
  add_flag(cmd, f, "--lr", "lr", c.lr, "learning rate");
  add_flag(cmd, f, "--weight-decay", "weight_decay", c.weight_decay, "weight decay");
  add_flag(cmd, f, "--mask-weight-decay", "mask_weight_decay", c.mask_weight_decay,
           "weight decay of a learnable M (default: the same as --weight-decay)");
  add_flag(cmd, f, "--epochs", "epochs", c.epochs, "passes over the training set");
  add_flag(cmd, f, "--batch-size", "batch_size", c.batch_size, "batch size");
  add_flag(cmd, f, "--schedule", "schedule", c.schedule, "constant | cosine (after warm-up)")
      ->check(CLI::IsMember({"constant", "cosine"}));
  add_flag(cmd, f, "--warmup", "warmup", c.warmup, "linear warm-up steps");
  add_flag(cmd, f, "--qk-contrast", "qk_contrast", c.qk_contrast,
           "qk-svd/qk-opt: target logit gap between open and closed cells (default 10)");
  add_flag(cmd, f, "--qk-opt-steps", "qk_opt_steps", c.qk_opt_steps, "qk-opt: Adam steps");
  add_flag(cmd, f, "--qk-opt-lr", "qk_opt_lr", c.qk_opt_lr, "qk-opt: Adam learning rate");
  add_flag(cmd, f, "--threads", "threads", c.threads, "CPU threads (0 = LibTorch's default)");
  add_flag(cmd, f, "--device", "device", c.device, "auto | cpu | cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  add_flag(cmd, f, "--eval-every", "eval_every", c.eval_every,
           "steps between evaluations (0 = every epoch)");
  add_flag(cmd, f, "--checkpoint-every", "checkpoint_every", c.checkpoint_every,
           "steps between checkpoints (0 = every epoch)");
  add_flag(cmd, f, "--probe-size", "probe_size", c.probe_size,
           "sequences in the fixed batch that attention metrics use");
  add_flag(cmd, f, "--stop-after", "stop_after", c.stop_after,
           "stop with a checkpoint after this step, as if interrupted (for testing resume)");
  add_define_flag(*cmd, f.spec_flags);
  auto* resume = cmd->add_option("--resume", f.resume,
                                 "continue the interrupted run in this folder (other settings come "
                                 "from its config.json; only --threads/--device may change)");
  cmd->add_flag("-q,--quiet", f.quiet, "no progress output");
  cmd->add_flag("--json", f.json, "print the summary as JSON");

  cmd->callback([flags, preset, resume, &exit_code] {
    auto& f = *flags;
    auto overrides = overrides_of(f);
    if (f.quiet) overrides["progress"] = false;
    nlohmann::json summary;
    std::string out;
    if (resume->count() > 0) {
      for (const auto& [key, value] : overrides.items()) {
        if (key != "threads" && key != "device" && key != "progress") {
          throw CLI::ValidationError("--resume",
                                     "takes its settings from the run folder; only "
                                     "--threads, --device and --quiet may be given");
        }
      }
      if (preset->count() > 0 || !f.spec_flags.defines.empty()) {
        throw CLI::ValidationError("--resume", "--preset and -D cannot change a run being resumed");
      }
      out = f.resume;
      summary = training::resume(f.resume, overrides);
    } else {
      if (f.config.task.empty()) throw CLI::RequiredError("--task");
      if (!f.spec_flags.defines.empty()) {
        overrides["defines"] = compile_options(f.spec_flags).defines;
      }
      const auto config = training::resolve_config(f.config.task, f.config.preset, overrides);
      out = config.out;
      summary = training::train(config);
    }
    if (summary.value("interrupted", false)) {
      std::cerr << fmt::format("maskc: training stopped at step {}{}\n", summary.value("steps", 0),
                               out.empty() ? " (no --out, nothing saved)"
                                           : "; continue with: maskc train --resume " + out);
      exit_code = kExitInterrupted;
      return;
    }
    if (f.json) {
      std::cout << summary.dump(2) << '\n';
    } else {
      print_summary(summary, out);
    }
    exit_code = kExitOk;
  });
}

}  // namespace maskprior::cli
