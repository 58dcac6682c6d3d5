// Rendering of a ValidationReport: aligned text for people, JSON for scripts.
//
// JSON layout:
//   { "spec", "target", "depth", "ok", "inputs": [names], "inputs_zero_one": bool,
//     "declared": bool,              // dependencies from --depends: support and MDI are null
//     "feedback": {"rule": "token"|"state", "fed_back": [names]} | null,
//     "outputs": [ { "name", "readout", "depends_on": [names], "unreachable": [names],
//                    "exposed": [names], "support": [{"monomial": [names], "coefficient",
//                    "visible"}], "support_size", "mdi"? } ],
//     "support": [[names], ...]      // union over outputs, by degree
//     "mdi"?: { "degree", "accuracy", "unseen_accuracy", "points", "formula",
//               "coefficients": [{"monomial": [names], "coefficient"}],
//               "excluded_by_mask": bool,   // the mask hides an input the MDI uses
//               "exclusion_reason", "hidden_inputs": [names] }  // the first output's
//   }
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "validate/validate.h"

namespace maskprior::validate {
namespace {

constexpr size_t kMaxPrintedMonomials = 8;
constexpr int kLabelWidth = 13;

std::vector<std::string> names_of(const std::vector<size_t>& indices,
                                  const std::vector<std::string>& inputs) {
  std::vector<std::string> names;
  names.reserve(indices.size());
  for (size_t i : indices) names.push_back(inputs[i]);
  return names;
}

std::vector<std::string> monomial_names(uint64_t variables,
                                        const std::vector<std::string>& inputs) {
  std::vector<std::string> names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (variables >> i & 1) names.push_back(inputs[i]);
  }
  return names;
}

/// `x0·x1`, or `1` for the constant monomial.
std::string monomial_text(uint64_t variables, const std::vector<std::string>& inputs) {
  if (variables == 0) return "1";
  return fmt::format("{}", fmt::join(monomial_names(variables, inputs), "·"));
}

std::string number(double v) {
  return fmt::format("{:.6g}", v);
}

std::string list_or_none(const std::vector<std::string>& names) {
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, " "));
}

void line(std::string& out, const std::string& label, const std::string& text) {
  out += fmt::format("  {:<{}}{}\n", label, kLabelWidth, text);
}

std::string percent(double fraction) {
  return fmt::format("{:.2f}%", 100.0 * fraction);
}

nlohmann::json mdi_json(const MinDegreeInterpolator& mdi,
                        const std::optional<MdiExclusion>& exclusion,
                        const std::vector<std::string>& inputs) {
  if (!mdi.unavailable.empty()) return {{"unavailable", mdi.unavailable}};
  nlohmann::json coefficients = nlohmann::json::array();
  for (const Monomial& m : mdi.coefficients) {
    coefficients.push_back(
        {{"monomial", monomial_names(m.variables, inputs)}, {"coefficient", m.coefficient}});
  }
  return {{"degree", mdi.degree},
          {"accuracy", mdi.accuracy()},
          {"exact_accuracy", mdi.exact_accuracy()},
          {"unseen_accuracy",
           mdi.unseen_accuracy() ? nlohmann::json(*mdi.unseen_accuracy()) : nlohmann::json()},
          {"points", mdi.points},
          {"formula", format_polynomial(mdi.coefficients, inputs)},
          {"coefficients", coefficients},
          {"excluded_by_mask", exclusion ? nlohmann::json(exclusion->excluded) : nlohmann::json()},
          {"exclusion_reason", exclusion ? nlohmann::json(exclusion->reason) : nlohmann::json()},
          {"hidden_inputs", exclusion ? nlohmann::json(names_of(exclusion->hidden, inputs))
                                      : nlohmann::json::array()}};
}

/// `c[0] to c[3]`, or the one label.
std::string label_range(const std::vector<std::string>& labels) {
  if (labels.size() == 1) return labels.front();
  return fmt::format("{} to {}", labels.front(), labels.back());
}

/// The feedback rule in words, for the header.
std::string feedback_text(const ValidationReport& report) {
  const std::string tokens =
      fmt::format("{} fed back ({} answer token{})", label_range(report.fed_back),
                  report.fed_back.size(), report.fed_back.size() == 1 ? "" : "s");
  return *report.feedback == Feedback::kState
             ? fmt::format("state: {} carry what the row that predicted each could see", tokens)
             : fmt::format(
                   "token: {} carry only themselves (--feedback state: what their row "
                   "could see)",
                   tokens);
}

/// `feedback rule: token` for the verdict, when something is fed back; else "".
std::string feedback_rule(const ValidationReport& report) {
  return report.feedback ? fmt::format("feedback rule: {}", feedback_keyword(*report.feedback))
                         : "";
}

}  // namespace

std::string format_polynomial(const std::vector<Monomial>& terms,
                              const std::vector<std::string>& inputs) {
  if (terms.empty()) return "0";
  // Variables first by degree, the constant last, as in `x0 + x1 - 1`.
  std::vector<Monomial> ordered = terms;
  std::stable_sort(ordered.begin(), ordered.end(), [](const Monomial& a, const Monomial& b) {
    const int da = a.variables == 0 ? 64 : std::popcount(a.variables);
    const int db = b.variables == 0 ? 64 : std::popcount(b.variables);
    return da < db;
  });
  std::string out;
  for (const Monomial& m : ordered) {
    const double magnitude = std::abs(m.coefficient);
    const bool negative = m.coefficient < 0;
    if (out.empty()) {
      out += negative ? "-" : "";
    } else {
      out += negative ? " - " : " + ";
    }
    if (m.variables == 0) {
      out += number(magnitude);
    } else if (std::abs(magnitude - 1.0) < 1e-9) {
      out += monomial_text(m.variables, inputs);
    } else {
      out += number(magnitude) + "·" + monomial_text(m.variables, inputs);
    }
  }
  return out;
}

std::string format_report(const ValidationReport& report) {
  std::string out =
      fmt::format("validate {} against {}: {} inputs, {} output{}, depth {}\n", report.spec,
                  report.target, report.inputs.size(), report.outputs.size(),
                  report.outputs.size() == 1 ? "" : "s", report.depth);
  if (report.zero_one_inputs) out += "  (inputs 0/1 read as -1/+1)\n";
  if (report.feedback) line(out, "feedback", feedback_text(report));
  if (report.declared) {
    line(out, "not computed",
         "support, MDI: --depends declares which inputs each output needs, not the function (a "
         "truth table gives both)");
  }
  size_t unreachable = 0;
  for (const OutputReport& o : report.outputs) {
    out += fmt::format("output {} (read at {})\n", o.name, o.readout);
    line(out, "depends on", list_or_none(names_of(o.depends_on, report.inputs)));
    if (o.has_spectrum) {
      std::vector<std::string> terms;
      for (size_t k = 0; k < o.support.size() && k < kMaxPrintedMonomials; ++k) {
        const SupportMonomial& s = o.support[k];
        terms.push_back(fmt::format("{} ({}{})", monomial_text(s.monomial.variables, report.inputs),
                                    number(s.monomial.coefficient),
                                    s.visible ? "" : ", NOT visible"));
      }
      std::string text = terms.empty() ? "none" : fmt::format("{}", fmt::join(terms, ", "));
      if (o.support_size > terms.size()) {
        text += fmt::format(", ... ({} monomials)", o.support_size);
      }
      line(out, "support", "{" + text + "}");
    }
    const auto missing = names_of(o.unreachable, report.inputs);
    line(out, "unreachable",
         missing.empty() ? "none"
                         : fmt::format("{}  <- error: required, not visible from {}",
                                       list_or_none(missing), o.readout));
    const auto exposed = names_of(o.exposed, report.inputs);
    line(out, "exposed",
         exposed.empty()
             ? "none"
             : fmt::format("{}  <- warning: visible, target ignores them", list_or_none(exposed)));
    if (o.mdi) {
      if (!o.mdi->unavailable.empty()) {
        line(out, "MDI", "not computed: " + o.mdi->unavailable);
      } else {
        line(out, "MDI", format_polynomial(o.mdi->coefficients, report.inputs));
        line(out, "",
             fmt::format("degree {}, accuracy {} of {} points ({} on the unseen; {} exact, "
                         "without rounding)",
                         o.mdi->degree, percent(o.mdi->accuracy()), o.mdi->points,
                         o.mdi->unseen_accuracy() ? percent(*o.mdi->unseen_accuracy()) : "n/a",
                         percent(o.mdi->exact_accuracy())));
        if (o.mdi_exclusion) {
          line(out, "",
               fmt::format("{} by the mask: {}",
                           o.mdi_exclusion->excluded ? "excluded" : "not excluded",
                           o.mdi_exclusion->reason));
        }
      }
    }
    unreachable += o.unreachable.size();
  }
  if (report.ok()) {
    const std::string rule = feedback_rule(report);
    out += fmt::format("ok: every input the target depends on reaches its readout{}\n",
                       rule.empty() ? "" : " (" + rule + ")");
  } else {
    for (const OutputReport& o : report.outputs) {
      if (o.unreachable.empty()) continue;
      out += fmt::format("error: output {} needs {}, unreachable from {} within {} layer{}\n",
                         o.name, fmt::join(names_of(o.unreachable, report.inputs), ", "), o.readout,
                         report.depth, report.depth == 1 ? "" : "s");
    }
    const std::string rule = feedback_rule(report);
    out += fmt::format("the mask cannot express the target ({} unreachable input{}{})\n",
                       unreachable, unreachable == 1 ? "" : "s", rule.empty() ? "" : "; " + rule);
  }
  return out;
}

std::string report_json(const ValidationReport& report) {
  nlohmann::json outputs = nlohmann::json::array();
  std::set<std::pair<int, uint64_t>> union_support;  // (degree, variables)
  const OutputReport* first_output = nullptr;        // the first output with an MDI
  for (const OutputReport& o : report.outputs) {
    nlohmann::json support = nlohmann::json::array();
    for (const SupportMonomial& s : o.support) {
      support.push_back({{"monomial", monomial_names(s.monomial.variables, report.inputs)},
                         {"coefficient", s.monomial.coefficient},
                         {"visible", s.visible}});
      union_support.insert({std::popcount(s.monomial.variables), s.monomial.variables});
    }
    nlohmann::json entry = {
        {"name", o.name},
        {"readout", o.readout},
        {"depends_on", names_of(o.depends_on, report.inputs)},
        {"unreachable", names_of(o.unreachable, report.inputs)},
        {"exposed", names_of(o.exposed, report.inputs)},
        {"support", report.declared ? nlohmann::json() : support},
        {"support_size", report.declared ? nlohmann::json() : nlohmann::json(o.support_size)}};
    if (o.mdi) {
      entry["mdi"] = mdi_json(*o.mdi, o.mdi_exclusion, report.inputs);
      if (first_output == nullptr) first_output = &o;
    }
    outputs.push_back(std::move(entry));
  }
  nlohmann::json support = nlohmann::json::array();
  for (const auto& [degree, variables] : union_support) {
    support.push_back(monomial_names(variables, report.inputs));
  }
  nlohmann::json json = {{"spec", report.spec},     {"target", report.target},
                         {"depth", report.depth},   {"ok", report.ok()},
                         {"inputs", report.inputs}, {"inputs_zero_one", report.zero_one_inputs},
                         {"outputs", outputs},      {"support", support}};
  json["declared"] = report.declared;
  if (report.declared) json["support"] = nullptr;
  json["feedback"] = report.feedback ? nlohmann::json{{"rule", feedback_keyword(*report.feedback)},
                                                      {"fed_back", report.fed_back}}
                                     : nlohmann::json();
  if (first_output != nullptr) {
    json["mdi"] = mdi_json(*first_output->mdi, first_output->mdi_exclusion, report.inputs);
  }
  return json.dump(2) + "\n";
}

}  // namespace maskprior::validate
