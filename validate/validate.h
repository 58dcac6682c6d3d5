// `maskc validate`: can a compiled mask express a target function, and what does it expose?
//
// Pipeline: a truth table (built-in task or CSV) → bound to the spec's tokens (Target) →
// dependencies of each output (Walsh spectrum or enumeration) → reachability of each readout over
// the mask's attention graph → a report: required inputs that are unreachable (errors), reachable
// inputs the target ignores (shortcut exposure, warnings), support monomials and whether each is
// jointly visible, and for Boolean tables with a seen domain the min-degree interpolator.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/compiled_mask.h"
#include "tasks/truth_table.h"
#include "validate/mdi.h"
#include "validate/reachability.h"
#include "validate/walsh.h"

namespace maskprior::validate {

/// What an answer token that a causal decoder feeds back carries (`--feedback`). kToken: only
/// itself, a lossy function of what its row saw (c[0] does not hold the carry into place 1), so
/// only direct paths from the inputs count. kState: everything the row that predicted it could
/// see, as a model that writes its running state into the answer would.
enum class Feedback { kToken, kState };

/// `token` or `state`.
const char* feedback_keyword(Feedback feedback);
/// The rule `keyword` names; nullopt for anything else.
std::optional<Feedback> parse_feedback(std::string_view keyword);

/// How messages name a setting of validation. `key` is the setting (`readout`, `feedback`,
/// `depends`, `task`, `truth_table`); `value`, when not empty, a value to show with it.
using SettingNamer = std::function<std::string(std::string_view key, std::string_view value)>;

struct ValidateOptions {
  std::optional<int64_t> depth;      // layers to follow; default: the spec's layers (at least 1)
  std::vector<std::string> readout;  // Layout::tokens_of labels (`cls`, `x[3]`, `before c[0]`,
                                     // `before c`): one row for every output, or one per output;
                                     // default: the target's (readout_rule in validate.cpp)
  Feedback feedback = Feedback::kToken;  // what fed-back answer tokens carry (causal specs)
  /// Names settings in messages; empty: maskc's flags (setting_name). Python names its arguments.
  SettingNamer name_setting;
  /// Called now and then while the target is analysed (each output, each layer of a reachability
  /// walk); it may throw to stop the validation (`maskc serve --time-limit`). Empty: never called.
  std::function<void()> check_cancelled;
};

/// `options.name_setting`'s words for setting `key` (with `value` when not empty); without a
/// namer, maskc's flag: `--truth-table`, `--readout "before c"`.
std::string setting_name(const ValidateOptions& options, std::string_view key,
                         std::string_view value = {});

/// A truth table laid onto a spec's layout.
struct Target {
  std::string description;  // `task parity2`, `truth table t.csv`
  tasks::TruthTable table;
  std::vector<int64_t> input_tokens;    // per table input: its token in the spec
  std::vector<int64_t> readout_tokens;  // per output: the row that produces it
  /// A causal spec's answer tokens: the token after each readout row, unless it is an input
  /// (decoder row r predicts token r + 1, which is fed back). Under Feedback::kState each carries
  /// what its row saw; under kToken only itself.
  std::vector<GeneratedToken> fed_back;
  /// Dependencies declared with --depends (per output; the table then has no rows); none: read
  /// them from the table.
  std::optional<std::vector<std::vector<size_t>>> declared;
};

/// The built-in tasks task_target takes: those of the task families (tasks/family.h) whose target
/// is a truth table, in the families' order.
std::vector<std::string> validatable_tasks();
/// A built-in task on the spec's layout (Boolean tasks take n from span `x`; arithmetic tasks read
/// c[j] at the token before it, with their digits in the orders the spec declares: its `digits`
/// describe the data, docs/arithmetic.md "Digit order"). Throws InputError for an unknown task, a
/// layout that lacks the task's spans, or operands a and b declared in different orders.
Target task_target(const CompiledMask& mask, const std::string& task,
                   const ValidateOptions& options = {});
/// A truth table whose inputs name spec tokens (bound by bind_token_labels, core/layout.h);
/// outputs are read at options.readout, by default at the rows that predict the last span of a
/// causal spec (`before c`: one per output), else at `cls`. Throws InputError naming the table for
/// names that are no token of the spec, and for a default readout the spec does not have.
Target table_target(const CompiledMask& mask, tasks::TruthTable table,
                    const ValidateOptions& options = {});
/// Dependencies declared instead of a table (`--depends` texts, validate/declared_depends.h):
/// outputs and inputs are tokens of the spec. An output token is read, by default, at the row that
/// predicts it in a causal spec (the token before it), else at itself (`cls: x[0], x[1]`). Throws
/// SpecError at `--depends:FLAG:COLUMN` (the file named by setting_name(options, "depends")) for
/// text that is not a declaration or does not fit the spec.
Target depends_target(const CompiledMask& mask, const std::vector<std::string>& depends,
                      const ValidateOptions& options = {});
/// The target `maskc validate` checks: the built-in `task`, the truth table read from the CSV
/// file `truth_table`, or the `depends` declarations (exactly one of them; InputError otherwise).
Target target_of(const CompiledMask& mask, const std::optional<std::string>& task,
                 const std::optional<std::string>& truth_table,
                 const std::vector<std::string>& depends, const ValidateOptions& options);

struct SupportMonomial {
  Monomial monomial;
  bool visible = false;  // every variable of it reaches the readout
};

/// Whether the mask can rule the min-degree interpolator out: a mask only restricts which inputs
/// reach the readout, so it excludes the MDI exactly when it hides an input the MDI uses.
struct MdiExclusion {
  bool excluded = false;
  std::vector<size_t> needed;  // inputs the MDI's monomials use, ascending
  std::vector<size_t> hidden;  // of those, the ones that do not reach the readout
  std::string reason;          // one sentence saying why
};

struct OutputReport {
  std::string name;
  std::string readout;              // label of the readout token
  std::vector<size_t> depends_on;   // input indices, ascending
  std::vector<size_t> unreachable;  // required but not visible: the mask cannot express f
  std::vector<size_t> exposed;      // visible but not required: shortcut exposure
  bool has_spectrum = false;
  std::vector<SupportMonomial> support;       // the first kMaxReportedMonomials, by degree
  size_t support_size = 0;                    // all of them
  std::optional<MinDegreeInterpolator> mdi;   // when the table has a seen domain
  std::optional<MdiExclusion> mdi_exclusion;  // when the MDI was computed
};

inline constexpr size_t kMaxReportedMonomials = 4096;

struct ValidationReport {
  std::string spec;    // the spec's `mask` name
  std::string target;  // Target::description
  int64_t depth = 1;
  std::vector<std::string> inputs;    // input names
  bool zero_one_inputs = false;       // CSV inputs 0/1 were read as ±1
  bool declared = false;              // dependencies from --depends: no spectrum, no MDI
  std::optional<Feedback> feedback;   // the rule, when the target has fed-back answer tokens
  std::vector<std::string> fed_back;  // their labels
  std::vector<OutputReport> outputs;

  /// True when no output needs an input its readout cannot see.
  bool ok() const;
};

/// Analyses `target` against the mask (the whole pipeline above).
ValidationReport validate_target(const CompiledMask& mask, const Target& target,
                                 const ValidateOptions& options = {});

/// Human-readable report: aligned, short.
std::string format_report(const ValidationReport& report);
/// The same report as JSON: outputs, support, mdi (see docs in validate/report_text.cpp).
std::string report_json(const ValidationReport& report);
/// A polynomial in the inputs: `x0 + x1 - 1`, `0.5·x0·x2`.
std::string format_polynomial(const std::vector<Monomial>& terms,
                              const std::vector<std::string>& inputs);

}  // namespace maskprior::validate
