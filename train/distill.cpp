#include "train/distill.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <regex>
#include <sstream>

#include "compiler/compile.h"
#include "compiler/write_spec.h"
#include "core/cells.h"
#include "core/error.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "io/input_file.h"
#include "io/mask_file.h"
#include "io/safetensors.h"
#include "runtime/experiment.h"
#include "runtime/model.h"
#include "tasks/family.h"
#include "train/config.h"
#include "train/model_files.h"
#include "train/run_experiment.h"
#include "train/run_folder.h"
#include "train/run_spec.h"
#include "train/sized_prior.h"

namespace maskprior::training {
namespace {

using nlohmann::json;

/// What a run learned, for a distilled spec's header: "task addition", "data train.txt", "truth
/// table t.csv".
std::string run_subject(const TrainConfig& config) {
  if (!config.task.empty()) return "task " + config.task;
  if (!config.data.empty()) return "data " + config.data;
  return "truth table " + config.truth_table;
}

/// A run's data files as they can be read from here: a relative path that does not lead to the
/// file from this folder is taken from config.json's `resolved.data_files` (the absolute path
/// the run read, written since data files were recorded), once the file there has the content
/// the run read (its SHA-256). InputError naming both places when the file is found at neither,
/// and when the file there has changed since.
void locate_data_files(const RunFolder& folder, const json& written, TrainConfig& config) {
  const json resolved = written.value("resolved", json::object());
  const json recorded =
      resolved.is_object() ? resolved.value("data_files", json::object()) : json::object();
  for (const auto& [key, member] : kDataFileSettings) {
    std::string* path = &(config.*member);
    if (path->empty() || std::filesystem::exists(*path)) continue;
    const json entry = recorded.is_object() ? recorded.value(key, json()) : json();
    const bool has_record = entry.is_object() && entry.value("path", json()).is_string() &&
                            entry.value("sha256", json()).is_string();
    if (!has_record) {
      throw InputError(fmt::format(
          "{}: its {} file {} is not there from this folder ({}), and the run recorded no "
          "absolute path for it (a run from before data files were recorded): run this from the "
          "folder it was trained in",
          folder.path(), key, *path, std::filesystem::current_path().string()));
    }
    const std::string absolute = entry["path"].get<std::string>();
    const std::string sha256 = entry["sha256"].get<std::string>();
    if (!std::filesystem::exists(absolute)) {
      throw InputError(fmt::format(
          "{}: its {} file is neither at {} (from this folder) nor at {}, where the run read it; "
          "put it back there (its SHA-256 was {})",
          folder.path(), key, *path, absolute, sha256));
    }
    if (sha256_file(absolute, std::numeric_limits<uint64_t>::max(), key) != sha256) {
      throw InputError(fmt::format(
          "{}: its {} file {} has changed since the run read it (its SHA-256 was {}); distilling "
          "reads the data the run read",
          folder.path(), key, absolute, sha256));
    }
    *path = absolute;
  }
}

/// The config of the finished run in `folder`, its spec pointed at the folder's copy.
TrainConfig finished_run_config(const RunFolder& folder) {
  if (folder.has(kConfigFile) && !folder.has(kSummaryFile)) {
    throw InputError(fmt::format(
        "{} holds an unfinished run (no {}): finish it with `maskc train --resume {}` first",
        folder.path(), kSummaryFile, folder.path()));
  }
  TrainConfig config;
  json written;
  try {
    config = folder.read_config(nullptr, &written);
  } catch (const InputError& e) {
    if (!folder.has(kConfigFile)) throw;
    throw InputError(fmt::format("{} (a run of another maskc version?)", e.what()));
  }
  if (folder.has(kSpecFile)) config.spec = folder.file(kSpecFile);
  config.out.clear();
  locate_data_files(folder, written, config);
  return config;
}

/// Planes [L, H, N, N] merged as `per` asks: unchanged (head), OR over heads (layer) or over all.
std::vector<uint8_t> merge_planes(const std::vector<uint8_t>& pattern, int64_t& layers,
                                  int64_t& heads, int64_t n, const std::string& per) {
  if (per == "head") return pattern;
  const int64_t out_layers = per == "layer" ? layers : 1;
  const size_t plane = static_cast<size_t>(n * n);
  std::vector<uint8_t> merged(static_cast<size_t>(out_layers) * plane, 0);
  for (int64_t l = 0; l < layers; ++l) {
    for (int64_t h = 0; h < heads; ++h) {
      const size_t from = static_cast<size_t>(l * heads + h) * plane;
      const size_t to = static_cast<size_t>(per == "layer" ? l : 0) * plane;
      for (size_t i = 0; i < plane; ++i) merged[to + i] |= pattern[from + i];
    }
  }
  layers = out_layers;
  heads = 1;
  return merged;
}

/// The share of each layer's attention on the written pattern (per head: its own plane; merged:
/// the layer's or model's plane), mean over the first `rows` query rows and the heads (a causal
/// decoder's last row predicts no token: it is left out).
std::vector<double> covered_mass(const std::vector<float>& attention, int64_t layers, int64_t heads,
                                 int64_t n, int64_t rows, const SpecDraft& draft) {
  std::vector<double> mass(static_cast<size_t>(layers), 0.0);
  for (int64_t l = 0; l < layers; ++l) {
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t pl = draft.layers == 1 ? 0 : l, ph = draft.heads == 1 ? 0 : h;
      for (int64_t c = 0; c < rows * n; ++c) {
        const size_t cell = static_cast<size_t>((pl * draft.heads + ph) * n * n + c);
        if (draft.pattern[cell] == 0) continue;
        mass[static_cast<size_t>(l)] += attention[static_cast<size_t>((l * heads + h) * n * n + c)];
      }
    }
    mass[static_cast<size_t>(l)] /= static_cast<double>(heads * rows);
  }
  return mass;
}

/// InputError unless the weights file can hold the model `config` describes: its header's
/// numbers (read before any tensor) against the model's parameters, counted from its shape
/// (runtime::estimate_footprint, less the position table a run may not have), so that a
/// config.json edited to `depth` 1e8 is refused before the model is built.
void check_weights_fit(const RunFolder& folder, const runtime::ModelConfig& config) {
  InputFile file(folder.file(kWeightsFile));
  double numbers = 0;
  for (const auto& [name, entry] : read_safetensors_header(file).tensors) {
    double count = 1;
    for (const int64_t extent : entry.shape) count *= static_cast<double>(extent);
    numbers += count;
  }
  const double parameters = runtime::estimate_footprint(config, /*batch=*/1).parameters -
                            static_cast<double>(config.seq_len) * static_cast<double>(config.dim);
  if (parameters > 1.1 * numbers + 1e4) {
    throw InputError(fmt::format(
        "{}: config.json describes a model of about {:.3g} parameters (dim {}, depth {}, heads {} "
        "x head_dim {}, mlp {}), but {} holds {:.3g} numbers: they are not of one model",
        folder.path(), parameters, config.dim, config.depth, config.heads, config.head_dim,
        config.mlp, kWeightsFile, numbers));
  }
}

/// The model of the run, built as it trained and loaded from weights.safetensors.
/// `prepare` installs what the model held beyond its parameters (a run over several sizes: its
/// priors) before the weights are loaded.
runtime::MaskedTransformer load_model(
    const RunFolder& folder, const runtime::ModelConfig& config,
    const std::function<void(runtime::MaskedTransformer&)>& prepare = {}) {
  if (!folder.has(kWeightsFile)) {
    throw InputError(
        fmt::format("{} has no {}: the run did not save its weights", folder.path(), kWeightsFile));
  }
  check_weights_fit(folder, config);
  runtime::MaskedTransformer model = [&] {
    try {
      return runtime::MaskedTransformer(config);
    } catch (const std::bad_alloc&) {
    } catch (const c10::Error& e) {
      if (std::string(e.what()).find("alloc") == std::string::npos) throw;
    }
    throw InputError(fmt::format(
        "{}: not enough memory for the model config.json describes (dim {}, depth {}, heads {} x "
        "head_dim {}, mlp {}, vocabulary {}, {} tokens)",
        folder.path(), config.dim, config.depth, config.heads, config.head_dim, config.mlp,
        config.vocab, config.seq_len));
  }();
  if (prepare) prepare(model);
  load_model_tensors(model, read_safetensors(folder.file(kWeightsFile)), folder.file(kWeightsFile));
  model->eval();
  return model;
}

/// The draft of the run's mean attention maps, its layer masses in `distilled`.
SpecDraft attention_draft(const RunFolder& folder, const TrainConfig& config,
                          const DistillOptions& options, Distillation& distilled) {
  std::optional<CompiledMask> spec;
  if (!config.spec.empty()) spec = load_spec(config);
  const auto experiment = make_run_experiment(config, spec);
  const runtime::ModelConfig model_config = experiment->model_config(experiment_config(config));
  const auto groups = experiment->size_groups();
  std::optional<SizedSpec> sized;
  if (!groups.empty() && spec) {  // a run over several sizes: its priors, then its weights
    sized = compile_sizes(config, groups, model_config);
    spec = sized->by_tokens.at(experiment->layout().size());
  }
  runtime::MaskedTransformer model = load_model(folder, model_config, [&](auto& m) {
    std::map<int64_t, torch::Tensor> initial;
    if (!groups.empty())
      install_sized_priors(m, config, sized ? &*sized : nullptr, groups, initial);
  });
  const torch::Tensor ids = experiment->probe_inputs(options.rows);
  distilled.rows = ids.size(0);
  const std::vector<torch::Tensor> maps = model->attention_maps(ids);
  const auto mean = torch::stack(maps).mean(/*dim=*/1).to(torch::kFloat).contiguous();  // [L,H,N,N]
  const std::vector<float> attention(mean.data_ptr<float>(), mean.data_ptr<float>() + mean.numel());
  const int64_t layers = mean.size(0), heads = mean.size(1), n = mean.size(2);
  if (const auto bad = std::find_if_not(attention.begin(), attention.end(),
                                        [](float a) { return std::isfinite(a); });
      bad != attention.end()) {
    const auto i = static_cast<int64_t>(bad - attention.begin());
    throw InputError(fmt::format(
        "{}: the model's attention is {} at layer {}, head {}, query {}, key {}: its weights are "
        "not finite (a diverged run?), so it attends to nothing that can be written as a spec",
        folder.file(kWeightsFile), std::isnan(*bad) ? "nan" : fmt::format("{}", *bad),
        i / (heads * n * n), i / (n * n) % heads, i / n % n, i % n));
  }
  SpecDraft draft;
  draft.layout = spec ? spec->layout : experiment->layout();
  if (!groups.empty()) draft.layout = experiment->layout();  // the probe rows': longest trained
  if (!spec) {  // a run without a spec: its data's digit orders, so `align` can be written
    const json settings = to_json(config);
    const tasks::TaskFamily& family = tasks::family_of_run(settings);
    if (family.digit_orders) {
      for (const auto& [name, order] : family.digit_orders(settings)) {
        for (Span& span : draft.layout.spans) {
          if (span.name == name) span.digits = order;
        }
      }
    }
  }
  draft.layers = layers;
  draft.heads = heads;
  draft.pattern = merge_planes(mass_pattern(attention, n, options.mass), draft.layers, draft.heads,
                               n, options.per);
  if (spec) {
    draft.name = spec->name;
    draft.open_value = spec->open_value;
    draft.close_value = spec->close_value;
  }
  if (sized && spec->hard) {  // the size's compiled spec, hard causal added for a decoder
    draft.hard = spec->hard;
  } else if (model->hard_mask().defined()) {
    const auto hard = model->hard_mask().to(torch::kCPU, torch::kUInt8).contiguous();
    draft.hard.emplace(hard.data_ptr<uint8_t>(), hard.data_ptr<uint8_t>() + hard.numel());
  } else if (model_config.readout == runtime::Readout::kCausalLm) {
    add_hard_causal(draft.hard, n);
  }
  distilled.last_row_left_out = model_config.readout == runtime::Readout::kCausalLm && n > 1;
  distilled.layer_mass =
      covered_mass(attention, layers, heads, n, distilled.last_row_left_out ? n - 1 : n, draft);
  return draft;
}

/// The draft of the run's learned M: the cells that lean open (core/cells.h).
SpecDraft mask_draft(const RunFolder& folder, const DistillOptions& options) {
  if (!folder.has(kMaskFile)) {
    throw InputError(fmt::format(
        "{} has no {}: only runs whose model carries a mask M (init mask, mask-…) have one; use "
        "--from attention",
        folder.path(), kMaskFile));
  }
  const CompiledMask learned = read_mask_file(folder.file(kMaskFile));
  check_finite_cells(learned, folder.file(kMaskFile));
  SpecDraft draft;
  draft.name = learned.name;
  draft.layout = learned.layout;
  draft.layers = learned.layers;
  draft.heads = learned.heads;
  draft.pattern =
      merge_planes(open_pattern(learned), draft.layers, draft.heads, learned.n, options.per);
  draft.hard = learned.hard;
  draft.open_value = learned.open_value;
  draft.close_value = learned.close_value;
  return draft;
}

/// The statement a rule's line holds: [begin, end) of `line`'s code, the verb and the shape
/// (`open SHAPE [at V]`, `close SHAPE [at V]`, `set SHAPE = V`); nothing when the line holds no
/// such statement or several.
struct Statement {
  size_t begin = 0, end = 0;
  std::string verb, shape;
};
std::optional<Statement> statement_of(const std::string& line) {
  const std::string code = line.substr(0, line.find('#'));
  static const std::regex verb(R"(\b(open|close|set)\s+)");
  std::smatch match;
  if (!std::regex_search(code, match, verb)) return std::nullopt;
  Statement s;
  s.begin = static_cast<size_t>(match.position(0));
  s.verb = match[1];
  const size_t close_brace = code.find('}', s.begin);
  s.end = close_brace == std::string::npos ? code.find_last_not_of(" \t\r") + 1 : close_brace;
  std::string rest = code.substr(s.begin + static_cast<size_t>(match.length(0)),
                                 s.end - s.begin - static_cast<size_t>(match.length(0)));
  if (std::regex_search(rest, verb)) return std::nullopt;  // a second statement on the line
  static const std::regex value(R"(^(.*?)\s+(at\s+.*|=.*)$)");
  if (std::regex_match(rest, match, value)) rest = match[1];
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.pop_back();
  s.shape = rest;
  return s;
}

/// Rewrites the statement of `rule` (a learned_rules row) in the spec's `lines`: `open` or
/// `close` per plane by its learned value against the size's `open` and `close` values (the
/// statement in `head`/`layer` blocks where planes differ), its values in a comment.
void rewrite_rule(std::vector<std::string>& lines, const json& rule, double open, double close,
                  const CompiledMask& compiled, const std::string& spec_path) {
  auto fail = [&](int64_t line, const std::string& why) {
    return InputError(fmt::format("{}:{}: cannot write the learned value of this rule back: {}",
                                  spec_path, line, why));
  };
  const auto line = rule.at("line").get<int64_t>();
  const json& learned = rule.at("learned");
  // The verb of each plane that holds the rule's cells, by its learned value.
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> by_verb;
  std::string values;
  for (const json& plane : rule.value("planes", json::array())) {
    const auto l = plane.at(0).get<int64_t>(), h = plane.at(1).get<int64_t>();
    const json& row = learned.at(learned.size() == 1 ? 0 : static_cast<size_t>(l));
    const double v = row.at(row.size() == 1 ? 0 : static_cast<size_t>(h)).get<double>();
    by_verb[std::abs(v - open) < std::abs(v - close) ? "open" : "close"].emplace_back(l, h);
    values += fmt::format("{}{:.3g}", values.empty() ? "" : ", ", v);
  }
  if (by_verb.empty()) return;  // no cells at that size
  const std::string note =
      fmt::format("  # learned {} (written {:.3g})", values, rule.at("written").get<double>());
  if (line == 0) {  // the cells no statement wrote: the `default`
    static const std::regex default_line(R"(^\s*default\b)");
    const auto it = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
      return std::regex_search(l, default_line);
    });
    if (it == lines.end()) return;  // M's default 0: nothing to rewrite
    const std::string verb = by_verb.size() == 1 ? by_verb.begin()->first
                             : by_verb["open"].size() > by_verb["close"].size() ? "open"
                                                                                : "close";
    *it = "default " + verb + note + (by_verb.size() > 1 ? " (planes differ: the majority)" : "");
    return;
  }
  if (line < 1 || line > static_cast<int64_t>(lines.size())) throw fail(line, "no such line");
  std::string& text = lines[static_cast<size_t>(line - 1)];
  const auto statement = statement_of(text);
  if (!statement) throw fail(line, "the line holds no single open, close or set statement");
  if (statement->shape.rfind("distance", 0) == 0) {
    text += "  # kept: a distance rule's values vary by cell";
    return;
  }
  std::string written;
  if (by_verb.size() == 1) {
    written = by_verb.begin()->first + " " + statement->shape;
  } else {
    for (const auto& [verb, planes] : by_verb) {
      for (const auto& [l, h] : planes) {
        std::string block = fmt::format("{} {}", verb, statement->shape);
        if (compiled.heads > 1) block = fmt::format("head {} {{ {} }}", h, block);
        if (compiled.layers > 1) block = fmt::format("layer {} {{ {} }}", l, block);
        written += (written.empty() ? "" : " ") + block;
      }
    }
  }
  const std::string code = text.substr(0, text.find('#'));
  const std::string after = code.substr(statement->end);
  text = code.substr(0, statement->begin) + written + (after.empty() ? "" : " ") + after;
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.pop_back();
  text += note;
}

/// A run over several sizes whose learnable prior was tied to its spec's rules (--mask-param
/// rules): the spec's own text, each rule written `open` or `close` as its learned value
/// (summary.json's learned_rules: what the rule writes plus its learned offset, at the longest
/// trained size) lies nearer that size's open or close value, per layer and head where they
/// differ. A program still: it compiles at every size, as the run's spec did.
std::string rules_spec(const RunFolder& folder, const TrainConfig& config, int64_t value) {
  const json summary = folder.read_json(kSummaryFile);
  const json rules = summary.value("learned_rules", json::array());
  if (!rules.is_array() || rules.empty()) {
    throw InputError(fmt::format("{}: summary.json has no learned_rules table", folder.path()));
  }
  TrainConfig at = config;
  at.defines[config.length_param] = std::to_string(value);
  const CompiledMask compiled = load_spec(at);
  const double open = compiled.open_value, close = compiled.close_value;
  std::vector<std::string> lines;
  {
    std::istringstream text(read_regular_file(config.spec, kMaxSpecBytes, "spec"));
    for (std::string line; std::getline(text, line);) lines.push_back(line);
  }
  for (const json& rule : rules) rewrite_rule(lines, rule, open, close, compiled, config.spec);
  std::string out = fmt::format(
      "{}{} --from mask`\n# run: {}, init {} --mask-param rules, seed {}, spec {}\n"
      "# each rule opens where its learned value (written + learned offset, at {} = {}) lies "
      "nearer the open value ({:.3g}) than the close value ({:.3g}) there\n",
      kDistilledHeader, folder.path(), run_subject(config), config.init, config.seed, config.spec,
      config.length_param, value, open, close);
  for (const std::string& line : lines) out += line + "\n";
  CompileOptions check;
  check.defines[config.length_param] = std::to_string(value);
  try {
    compile_source(out, "distilled spec", check);
  } catch (const std::exception& e) {
    throw InternalError(fmt::format("the distilled spec does not compile: {}", e.what()));
  }
  return out;
}

}  // namespace

std::vector<uint8_t> mass_pattern(const std::vector<float>& attention, int64_t n, double mass) {
  std::vector<uint8_t> pattern(attention.size(), 0);
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (size_t row = 0; row + static_cast<size_t>(n) <= attention.size();
       row += static_cast<size_t>(n)) {
    const float* a = attention.data() + row;
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return a[x] > a[y]; });
    const double total = std::accumulate(a, a + n, 0.0);
    double held = 0;
    for (int64_t k : order) {
      if (held >= mass * total || a[k] <= 0) break;
      held += a[k];
      pattern[row + static_cast<size_t>(k)] = 1;
    }
  }
  return pattern;
}

Distillation distill_run(const std::string& run_dir, const DistillOptions& options) {
  internal_check(options.from == "attention" || options.from == "mask", "distill: --from");
  internal_check(options.per == "head" || options.per == "layer" || options.per == "model",
                 "distill: --per");
  const RunFolder folder(run_dir);
  const TrainConfig config = finished_run_config(folder);
  Distillation distilled;
  if (options.from == "mask" && !folder.has(kMaskFile) && folder.has(kSpecFile)) {
    // A run over several sizes holds a prior per size, not one M: its rules, or its spec.
    std::optional<CompiledMask> spec = load_spec(config);
    const auto experiment = make_run_experiment(config, spec);
    for (const auto& group : experiment->size_groups()) {
      if (group.layout.size() != experiment->layout().size()) continue;
      if (config.init != "mask" && config.init != "mask-zero") {
        throw InputError(fmt::format(
            "{}: its prior was fixed (--init {}), the spec compiled at each size: {} is that spec",
            folder.path(), config.init, folder.file(kSpecFile)));
      }
      distilled.spec = rules_spec(folder, config, group.size);
      return distilled;
    }
  }
  SpecDraft draft = options.from == "mask" ? mask_draft(folder, options)
                                           : attention_draft(folder, config, options, distilled);
  draft.comments = {
      fmt::format("{}{} --from {}{} --per {}`", std::string(kDistilledHeader).substr(2), run_dir,
                  options.from,
                  options.from == "attention"
                      ? fmt::format(" --mass {} --rows {}", options.mass, options.rows)
                      : "",
                  options.per),
      fmt::format("run: {}, init {}, seed {}{}", run_subject(config), config.init, config.seed,
                  config.spec.empty() ? "" : fmt::format(", spec {}", config.spec)),
  };
  if (options.from == "attention") {
    draft.comments.push_back(fmt::format(
        "each query row keeps the fewest keys holding {} of its attention, averaged over {} probe "
        "rows{}",
        options.mass, distilled.rows,
        distilled.rows < options.rows
            ? fmt::format(" (--rows {}: all the probe rows the run has)", options.rows)
            : ""));
    for (size_t l = 0; l < distilled.layer_mass.size(); ++l) {
      draft.comments.push_back(fmt::format(
          "layer {}: the pattern holds {:.3f} of the attention{}", l, distilled.layer_mass[l],
          distilled.last_row_left_out ? " of the rows that predict a token" : ""));
    }
  } else {
    draft.comments.push_back(
        "open: the cells whose learned M lies nearer the open value than the close value");
  }
  if (opens_every_allowed_cell(draft)) {
    distilled.no_prior = fmt::format(
        "the distilled pattern opens every cell, so the spec is no prior ({})",
        options.from == "attention"
            ? "the attention is spread over whole rows; --per head or a lower --mass keeps less"
            : "the learned M is nearer the open value everywhere");
    draft.comments.push_back(distilled.no_prior);
  }
  distilled.spec = write_spec(draft);
  return distilled;
}

}  // namespace maskprior::training
