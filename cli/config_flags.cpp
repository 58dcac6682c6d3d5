#include "cli/config_flags.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <type_traits>
#include <variant>

namespace maskprior::cli {

namespace {

/// CLI11 check of a floating flag's value: NaN and infinities are usage errors (exit 2), before
/// check_config would refuse them as input errors.
std::string check_finite(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() && *end == '\0' && !std::isfinite(value)) {
    return "must be a finite number, got '" + text + "'";
  }
  return {};
}

/// Registers the flag of one row of the config table (see add_config_flags).
void add_field_flag(CLI::App& cmd, ConfigFlags& flags, const training::ConfigField& field) {
  CLI::Option* option = std::visit(
      [&](auto member) -> CLI::Option* {
        auto& value = flags.config.*member;
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, bool>) {
          const bool flipped = !value;
          return cmd.add_flag_function(
              field.flags, [&value, flipped](std::int64_t) { value = flipped; }, field.help);
        } else if constexpr (std::is_same_v<T, std::map<std::string, std::string>>) {
          return add_define_flag(cmd, flags.spec_flags)->description(field.help);
        } else if constexpr (std::is_same_v<T, std::optional<double>>) {  // unset unless given
          return cmd.add_option_function<double>(
              field.flags, [&value](const double& given) { value = given; }, field.help);
        } else {
          return cmd.add_option(field.flags, value, field.help);
        }
      },
      field.member);
  if (!field.allowed.empty()) option->check(CLI::IsMember(field.allowed));
  if (std::holds_alternative<double training::TrainConfig::*>(field.member) ||
      std::holds_alternative<std::optional<double> training::TrainConfig::*>(field.member)) {
    option->check(CLI::Validator(check_finite, /*validator_desc=*/"", "finite"));
  }
  flags.given.emplace_back(option, &field);
}

}  // namespace

void add_config_flags(CLI::App& cmd, ConfigFlags& flags) {
  for (const auto& field : training::config_fields()) add_field_flag(cmd, flags, field);
}

nlohmann::json overrides_of(ConfigFlags& flags) {
  flags.config.defines = compile_options(flags.spec_flags).defines;
  const auto all = training::to_json(flags.config);
  nlohmann::json overrides = nlohmann::json::object();
  for (const auto& [option, field] : flags.given) {
    if (option->count() > 0) overrides[field->key] = all.at(field->key);
  }
  return overrides;
}

std::string flag_text(const training::ConfigField& field) {
  std::string text = field.flags;
  for (char& c : text) c = c == ',' ? '/' : c;
  return text;
}

}  // namespace maskprior::cli
