#include "validate/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "tasks/family.h"
#include "validate/declared_depends.h"
#include "validate/dependencies.h"

namespace maskprior::validate {
namespace {

const Span& require_span(const CompiledMask& mask, const std::string& name, const std::string& task,
                         const std::string& expected) {
  return mask.layout.require(name, [&](const std::string& message) {
    throw InputError(fmt::format("spec '{}': {}; task {} expects the layout {}", mask.name, message,
                                 task, expected));
  });
}

/// Readout rows from --readout: each name a token, a span or `before SPAN`
/// (Layout::tokens_of), together one row for every output or one per output.
std::vector<int64_t> readout_rows(const CompiledMask& mask, const std::vector<std::string>& names,
                                  size_t outputs, const std::string& what) {
  std::vector<int64_t> rows;
  for (const std::string& name : names) {
    const std::vector<int64_t> tokens = mask.layout.tokens_of(name);
    if (tokens.empty()) {
      throw InputError(fmt::format(
          "readout {}: no such token or span in spec '{}' (name a token as x[3] or cls, a span "
          "as c, or the rows before a span's tokens as \"before c\")",
          quote_input(name), mask.name));
    }
    rows.insert(rows.end(), tokens.begin(), tokens.end());
  }
  if (rows.size() != 1 && rows.size() != outputs) {
    throw InputError(
        fmt::format("{} has {} output{} but the readout {} names {} rows (give one for all outputs "
                    "or one per output)",
                    what, outputs, outputs == 1 ? "" : "s", fmt::join(names, " "), rows.size()));
  }
  if (rows.size() == 1) rows.assign(outputs, rows.front());
  return rows;
}

/// A table's default readout: the rows that predict the last span of a causal spec (`before c`),
/// one per output; otherwise `cls`. The message names the spec, never a flag the user did not give.
std::vector<int64_t> default_table_readout(const CompiledMask& mask, size_t outputs,
                                           const std::string& what,
                                           const ValidateOptions& options) {
  if (is_causal(mask) && !mask.layout.spans.empty()) {
    const Span& answer = mask.layout.spans.back();
    if (answer.offset > 0 && static_cast<size_t>(answer.length) == outputs) {
      return mask.layout.tokens_of("before " + answer.name);
    }
    throw InputError(fmt::format(
        "spec '{}' is a causal decoder (`hard causal`), so {} is read by default at the rows that "
        "predict its last span, `{}` ({} token{}), but it has {} output{}: say where to read them "
        "with {} (a token each, or a span: {})",
        mask.name, what, answer.name, answer.length, answer.length == 1 ? "" : "s", outputs,
        outputs == 1 ? "" : "s", setting_name(options, "readout"),
        setting_name(options, "readout", "\"before SPAN\"")));
  }
  const std::optional<int64_t> cls = mask.layout.token_index("cls");
  if (!cls) {
    throw InputError(fmt::format(
        "spec '{}' has no token `cls`, where {} is read by default, and is no causal decoder (it "
        "lacks `hard causal`), whose outputs are read at the rows that predict its last span: say "
        "where to read it with {}",
        mask.name, what, setting_name(options, "readout", "TOKEN")));
  }
  return std::vector<int64_t>(outputs, *cls);
}

/// The readout rows: --readout when given, else `fallback()`.
template <class Fallback>
std::vector<int64_t> readout_of(const CompiledMask& mask, const ValidateOptions& options,
                                size_t outputs, const std::string& what, Fallback fallback) {
  return options.readout.empty() ? fallback() : readout_rows(mask, options.readout, outputs, what);
}

/// The answer tokens a causal spec feeds back (Target::fed_back); an InputError for
/// --feedback state on a spec that feeds nothing back.
void add_fed_back(const CompiledMask& mask, Target& target, const ValidateOptions& options) {
  if (is_causal(mask)) {
    std::vector<int64_t> rows = target.readout_tokens;
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    for (int64_t row : rows) {
      const int64_t token = row + 1;
      const bool input = std::find(target.input_tokens.begin(), target.input_tokens.end(), token) !=
                         target.input_tokens.end();
      if (token < mask.n && !input) target.fed_back.push_back({token, row});
    }
  }
  if (options.feedback == Feedback::kState && target.fed_back.empty()) {
    throw InputError(
        fmt::format("{}: nothing is fed back in spec '{}' against {} ({}), so there is no "
                    "answer token to carry state",
                    setting_name(options, "feedback", "state"), mask.name, target.description,
                    is_causal(mask) ? "no readout row is followed by an answer token"
                                    : "it is no causal decoder: it lacks `hard causal`"));
  }
}

/// The arithmetic task `task` with the data the spec's `digits` declarations describe (the task's
/// defaults where it declares none): the order of a and b, which must agree, and of c.
tasks::ArithmeticTask arithmetic_data(const CompiledMask& mask, const std::string& task,
                                      const Span& a, const Span& b, const Span& c) {
  tasks::ArithmeticTask arithmetic = tasks::make_arithmetic_task(task);
  if (a.digits && b.digits && *a.digits != *b.digits) {
    throw InputError(fmt::format(
        "spec '{}' declares `digits a {}` but `digits b {}`; task {} writes both operands in one "
        "order",
        mask.name, digit_order_keyword(*a.digits), digit_order_keyword(*b.digits), task));
  }
  if (const auto operands = a.digits ? a.digits : b.digits) arithmetic.operand_order = *operands;
  if (c.digits) arithmetic.answer_order = *c.digits;
  return arithmetic;
}

/// A Boolean task (tasks/boolean_task.h): the cube of x, read at cls.
Target boolean_target(const CompiledMask& mask, const std::string& task,
                      const ValidateOptions& options) {
  Target target;
  target.description = "task " + task;
  const std::string expected = "cls, x[n]";
  require_span(mask, "cls", task, expected);
  const Span& x = require_span(mask, "x", task, expected);
  // Clamped only to fit an int; make_boolean_task rejects sizes past its own cap.
  const int n = static_cast<int>(std::min<int64_t>(x.length, 1 << 20));
  target.table = tasks::boolean_truth_table(tasks::make_boolean_task(task, n));
  for (int64_t i = 0; i < x.length; ++i) target.input_tokens.push_back(x.offset + i);
  target.readout_tokens = readout_of(mask, options, 1, target.description, [&] {
    return std::vector<int64_t>{*mask.layout.token_index("cls")};
  });
  add_fed_back(mask, target, options);
  return target;
}

/// An arithmetic task (tasks/arithmetic_task.h): each answer digit from the operands' digits,
/// read at the row before it and fed back.
Target arithmetic_target(const CompiledMask& mask, const std::string& task,
                         const ValidateOptions& options) {
  Target target;
  target.description = "task " + task;
  const tasks::ArithmeticTask arithmetic = tasks::make_arithmetic_task(task);
  const std::string expected = fmt::format("a[{0}], op, b[{0}], eq, c[{1}]",
                                           arithmetic.operand_digits, arithmetic.answer_digits);
  const Span& a = require_span(mask, "a", task, expected);
  const Span& b = require_span(mask, "b", task, expected);
  const Span& c = require_span(mask, "c", task, expected);
  for (const Span* span : {&a, &b, &c}) {
    const int64_t want = span == &c ? arithmetic.answer_digits : arithmetic.operand_digits;
    if (span->length != want) {
      throw InputError(fmt::format("spec '{}': span `{}` has {} tokens, task {} expects {} ({})",
                                   mask.name, span->name, span->length, task, want, expected));
    }
  }
  if (c.offset == 0) {
    throw InputError(fmt::format("spec '{}': no token before c[0] to predict it", mask.name));
  }
  target.table = tasks::arithmetic_truth_table(arithmetic_data(mask, task, a, b, c));
  for (const Span* span : {&a, &b}) {
    for (int64_t i = 0; i < span->length; ++i) target.input_tokens.push_back(span->offset + i);
  }
  // A decoder predicts c[j] at the row before it, and feeds c[j] back (Feedback).
  target.readout_tokens = readout_of(mask, options, target.table.outputs.size(), target.description,
                                     [&] { return mask.layout.tokens_of("before c"); });
  add_fed_back(mask, target, options);
  return target;
}

/// The target of each task family whose tasks have a truth table, by the family's name (its
/// descriptor, tasks/family.h, says which family a task is).
using TargetBuilder = Target (*)(const CompiledMask&, const std::string&, const ValidateOptions&);
const std::map<std::string, TargetBuilder>& target_builders() {
  static const std::map<std::string, TargetBuilder> builders = {{"boolean", &boolean_target},
                                                                {"arithmetic", &arithmetic_target}};
  return builders;
}

}  // namespace

std::vector<std::string> validatable_tasks() {
  std::vector<std::string> names;
  for (const tasks::TaskFamily& family : tasks::families()) {
    if (target_builders().contains(family.name)) {
      names.insert(names.end(), family.tasks.begin(), family.tasks.end());
    }
  }
  return names;
}

Target task_target(const CompiledMask& mask, const std::string& task,
                   const ValidateOptions& options) {
  const tasks::TaskFamily& family = tasks::family_of_task(task);  // unknown task: InputError
  const auto builder = target_builders().find(family.name);
  if (builder == target_builders().end()) {
    std::vector<std::string> names;
    for (const auto& [name, build] : target_builders()) names.push_back(name);
    throw InputError(fmt::format(
        "task {} is of the {} family, whose target is no truth table to validate against (the "
        "families that have one: {}; or give --truth-table or --depends)",
        task, family.name, fmt::join(names, ", ")));
  }
  return builder->second(mask, task, options);
}

Target table_target(const CompiledMask& mask, tasks::TruthTable table,
                    const ValidateOptions& options) {
  Target target;
  target.description = "truth table " + table.source;
  target.input_tokens = bind_token_labels(
      mask.layout, table.inputs, mask.name,
      [&](size_t i, const std::string& message) { return table.input_error(i, message); });
  target.readout_tokens = readout_of(mask, options, table.outputs.size(), target.description, [&] {
    return default_table_readout(mask, table.outputs.size(),
                                 fmt::format("the output of {}", target.description), options);
  });
  target.table = std::move(table);
  add_fed_back(mask, target, options);
  return target;
}

Target depends_target(const CompiledMask& mask, const std::vector<std::string>& depends,
                      const ValidateOptions& options) {
  const DeclaredDependencies declared =
      bind_depends(mask.layout, depends, mask.name, setting_name(options, "depends"));
  Target target;
  target.description = "declared dependencies";
  for (const std::vector<int64_t>& inputs : declared.inputs) {
    target.input_tokens.insert(target.input_tokens.end(), inputs.begin(), inputs.end());
  }
  std::sort(target.input_tokens.begin(), target.input_tokens.end());
  target.input_tokens.erase(std::unique(target.input_tokens.begin(), target.input_tokens.end()),
                            target.input_tokens.end());
  target.table.source = setting_name(options, "depends");
  for (int64_t t : target.input_tokens) target.table.inputs.push_back(mask.layout.token_label(t));
  auto& needs = target.declared.emplace();
  for (size_t o = 0; o < declared.outputs.size(); ++o) {
    target.table.outputs.push_back(mask.layout.token_label(declared.outputs[o]));
    std::vector<size_t> indices;
    for (int64_t t : declared.inputs[o]) {
      indices.push_back(static_cast<size_t>(
          std::lower_bound(target.input_tokens.begin(), target.input_tokens.end(), t) -
          target.input_tokens.begin()));
    }
    needs.push_back(std::move(indices));
  }
  target.table.y.assign(declared.outputs.size(), {});
  target.table.values.assign(declared.outputs.size(), {});
  // An output token is read where it is produced: in a decoder, at the row that predicts it.
  const bool causal = is_causal(mask);
  target.readout_tokens =
      readout_of(mask, options, declared.outputs.size(), target.description, [&] {
        std::vector<int64_t> rows;
        for (int64_t t : declared.outputs) {
          if (causal && t == 0) {
            throw InputError(fmt::format(
                "{}: output {} is the first token of spec '{}', a causal decoder: no row "
                "predicts it (give its readout with {})",
                setting_name(options, "depends"), mask.layout.token_label(t), mask.name,
                setting_name(options, "readout")));
          }
          rows.push_back(causal ? t - 1 : t);
        }
        return rows;
      });
  add_fed_back(mask, target, options);
  return target;
}

Target target_of(const CompiledMask& mask, const std::optional<std::string>& task,
                 const std::optional<std::string>& truth_table,
                 const std::vector<std::string>& depends, const ValidateOptions& options) {
  if (int{task.has_value()} + int{truth_table.has_value()} + int{!depends.empty()} != 1) {
    throw InputError(fmt::format(
        "validate needs exactly one of a task, a truth table and declared dependencies ({}, {}, "
        "{})",
        setting_name(options, "task"), setting_name(options, "truth_table"),
        setting_name(options, "depends")));
  }
  if (task) return task_target(mask, *task, options);
  if (truth_table) return table_target(mask, tasks::read_truth_table_csv(*truth_table), options);
  return depends_target(mask, depends, options);
}

std::string setting_name(const ValidateOptions& options, std::string_view key,
                         std::string_view value) {
  if (options.name_setting) return options.name_setting(key, value);
  std::string flag = "--" + std::string(key);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return value.empty() ? flag : fmt::format("{} {}", flag, value);
}

const char* feedback_keyword(Feedback feedback) {
  return feedback == Feedback::kState ? "state" : "token";
}

std::optional<Feedback> parse_feedback(std::string_view keyword) {
  if (keyword == "token") return Feedback::kToken;
  if (keyword == "state") return Feedback::kState;
  return std::nullopt;
}

bool ValidationReport::ok() const {
  return std::all_of(outputs.begin(), outputs.end(),
                     [](const OutputReport& o) { return o.unreachable.empty(); });
}

namespace {

std::string joined_names(const std::vector<size_t>& indices,
                         const std::vector<std::string>& inputs) {
  std::string text;
  for (size_t i : indices) text += (text.empty() ? "" : ", ") + inputs[i];
  return text;
}

/// Can the mask rule `mdi` out? Only by hiding from the readout an input the MDI uses.
MdiExclusion mdi_exclusion(const MinDegreeInterpolator& mdi, const std::vector<std::string>& inputs,
                           const std::function<bool(size_t)>& reaches, const std::string& readout,
                           int64_t depth) {
  MdiExclusion exclusion;
  uint64_t used = 0;
  for (const Monomial& m : mdi.coefficients) used |= m.variables;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!(used >> i & 1)) continue;
    exclusion.needed.push_back(i);
    if (!reaches(i)) exclusion.hidden.push_back(i);
  }
  exclusion.excluded = !exclusion.hidden.empty();
  const std::string within =
      fmt::format("{} within {} layer{}", readout, depth, depth == 1 ? "" : "s");
  if (exclusion.excluded) {
    exclusion.reason = fmt::format(
        "the mask hides {} from {}, which the MDI uses: a model trained with it cannot represent "
        "the MDI",
        joined_names(exclusion.hidden, inputs), within);
  } else if (exclusion.needed.empty()) {
    exclusion.reason = "the MDI is a constant: no mask can rule it out";
  } else {
    exclusion.reason = fmt::format(
        "every input the MDI uses ({}) reaches {}: a mask only restricts which inputs reach the "
        "readout, so this one cannot force training away from the MDI",
        joined_names(exclusion.needed, inputs), within);
  }
  return exclusion;
}

}  // namespace

ValidationReport validate_target(const CompiledMask& mask, const Target& target,
                                 const ValidateOptions& options) {
  const tasks::TruthTable& table = target.table;
  internal_check(target.input_tokens.size() == table.inputs.size() &&
                     target.readout_tokens.size() == table.outputs.size(),
                 "target binding does not match its table");
  ValidationReport report;
  report.spec = mask.name;
  report.target = target.description;
  report.depth = options.depth.value_or(std::max<int64_t>(mask.layers, 1));
  report.inputs = table.inputs;
  report.zero_one_inputs = table.zero_one_inputs;
  report.declared = target.declared.has_value();
  if (!target.fed_back.empty()) {
    report.feedback = options.feedback;
    for (const GeneratedToken& g : target.fed_back) {
      report.fed_back.push_back(mask.layout.token_label(g.token));
    }
  }

  std::vector<OutputDependencies> dependencies;
  if (target.declared) {
    for (const std::vector<size_t>& inputs : *target.declared) {
      OutputDependencies declared;
      declared.inputs = inputs;
      dependencies.push_back(std::move(declared));
    }
  } else {
    dependencies = analyze_dependencies(table, options.check_cancelled);
  }
  const ReachabilityGraph graph(mask, report.depth, options.check_cancelled);
  const std::vector<std::vector<uint8_t>> visible = visible_tokens(
      graph, target.readout_tokens,
      options.feedback == Feedback::kState ? target.fed_back : std::vector<GeneratedToken>{});

  for (size_t o = 0; o < table.outputs.size(); ++o) {
    if (options.check_cancelled) options.check_cancelled();
    OutputReport out;
    out.name = table.outputs[o];
    out.readout = mask.layout.token_label(target.readout_tokens[o]);
    out.depends_on = dependencies[o].inputs;
    auto reaches = [&](size_t input) {
      return visible[o][static_cast<size_t>(target.input_tokens[input])] != 0;
    };
    for (size_t i = 0; i < table.inputs.size(); ++i) {
      const bool required = std::binary_search(out.depends_on.begin(), out.depends_on.end(), i);
      if (required && !reaches(i)) out.unreachable.push_back(i);
      if (!required && reaches(i)) out.exposed.push_back(i);
    }
    out.has_spectrum = dependencies[o].has_spectrum;
    out.support_size = dependencies[o].support.size();
    for (const Monomial& m : dependencies[o].support) {
      if (out.support.size() == kMaxReportedMonomials) break;
      bool visible_jointly = true;
      for (size_t i = 0; i < table.inputs.size(); ++i) {
        if ((m.variables >> i & 1) && !reaches(i)) visible_jointly = false;
      }
      out.support.push_back({m, visible_jointly});
    }
    if (table.has_seen()) {
      out.mdi = min_degree_interpolator(table, o);
      if (out.mdi->unavailable.empty()) {
        out.mdi_exclusion =
            mdi_exclusion(*out.mdi, table.inputs, reaches, out.readout, report.depth);
      }
    }
    report.outputs.push_back(std::move(out));
  }
  return report;
}

}  // namespace maskprior::validate
