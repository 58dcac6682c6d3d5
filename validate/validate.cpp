#include "validate/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "validate/dependencies.h"

namespace maskprior::validate {
namespace {

const Span& require_span(const CompiledMask& mask, const std::string& name, const std::string& task,
                         const std::string& expected) {
  const Span* span = mask.layout.find(name);
  if (span == nullptr) {
    throw InputError(fmt::format("spec '{}' has no span `{}`, but task {} expects the layout {}",
                                 mask.name, name, task, expected));
  }
  return *span;
}

/// Readout rows from --readout: one name for every output, or one per output.
std::vector<int64_t> readout_rows(const CompiledMask& mask, const std::vector<std::string>& names,
                                  size_t outputs, const std::string& what) {
  if (names.size() != 1 && names.size() != outputs) {
    throw InputError(
        fmt::format("{} has {} outputs but --readout names {} tokens (give one for "
                    "all outputs or one per output)",
                    what, outputs, names.size()));
  }
  std::vector<int64_t> rows;
  for (size_t o = 0; o < outputs; ++o) {
    const std::string& name = names[names.size() == 1 ? 0 : o];
    const std::optional<int64_t> token = mask.layout.token_index(name);
    if (!token) {
      throw InputError(fmt::format("--readout {}: no such token in spec '{}'", name, mask.name));
    }
    rows.push_back(*token);
  }
  return rows;
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

}  // namespace

Target task_target(const CompiledMask& mask, const std::string& task,
                   const ValidateOptions& options) {
  Target target;
  target.description = "task " + task;
  if (tasks::is_boolean_task(task)) {
    const std::string expected = "cls, x[n]";
    require_span(mask, "cls", task, expected);
    const Span& x = require_span(mask, "x", task, expected);
    // Clamped only to fit an int; make_boolean_task rejects sizes past its own cap.
    const int n = static_cast<int>(std::min<int64_t>(x.length, 1 << 20));
    target.table = tasks::boolean_truth_table(tasks::make_boolean_task(task, n));
    for (int64_t i = 0; i < x.length; ++i) target.input_tokens.push_back(x.offset + i);
    target.readout_tokens = readout_rows(
        mask, options.readout.empty() ? std::vector<std::string>{"cls"} : options.readout, 1,
        target.description);
    return target;
  }
  if (tasks::is_arithmetic_task(task)) {
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
    // A decoder predicts c[j] at the row before it. The digit it feeds back in as c[j] is not
    // counted as carrying its row's inputs: it is a lossy function of them (c[0] does not hold
    // the carry into place 1), so only direct paths from the operands count.
    for (int64_t j = 0; j < c.length; ++j) target.readout_tokens.push_back(c.offset + j - 1);
    if (!options.readout.empty()) {
      target.readout_tokens =
          readout_rows(mask, options.readout, target.table.outputs.size(), target.description);
    }
    return target;
  }
  std::vector<std::string> known = tasks::boolean_task_names();
  for (const std::string& name : tasks::arithmetic_task_names()) known.push_back(name);
  throw InputError(fmt::format("unknown task '{}' (known: {})", task, fmt::join(known, ", ")));
}

Target table_target(const CompiledMask& mask, tasks::TruthTable table,
                    const ValidateOptions& options) {
  Target target;
  target.description = "truth table " + table.source;
  target.input_tokens = bind_token_labels(mask.layout, table.inputs, table.source, mask.name);
  target.readout_tokens = readout_rows(
      mask, options.readout.empty() ? std::vector<std::string>{"cls"} : options.readout,
      table.outputs.size(), target.description);
  target.table = std::move(table);
  return target;
}

Target target_of(const CompiledMask& mask, const std::optional<std::string>& task,
                 const std::optional<std::string>& truth_table, const ValidateOptions& options) {
  if (task.has_value() == truth_table.has_value()) {
    throw InputError("validate needs exactly one of a task and a truth table");
  }
  return task ? task_target(mask, *task, options)
              : table_target(mask, tasks::read_truth_table_csv(*truth_table), options);
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

  const std::vector<OutputDependencies> dependencies = analyze_dependencies(table);
  const ReachabilityGraph graph(mask, report.depth);
  const std::vector<std::vector<uint8_t>> visible =
      visible_tokens(graph, target.readout_tokens, target.generated);

  for (size_t o = 0; o < table.outputs.size(); ++o) {
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
