#include "cli/config_flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <type_traits>
#include <variant>

#include "core/error.h"
#include "core/machine.h"
#include "io/json_file.h"

namespace maskprior::cli {

namespace {

/// CLI11 check of a flag's value against its row of the config table, so that a value out of
/// range is a usage error (exit 2) naming the setting, before check_config would refuse it as an
/// input error: a whole number must be one its type holds (CLI11 alone would saturate 1e30 and
/// wrap -1 of an unsigned seed), a floating one finite, and both in the row's range.
std::string value_error(const training::ConfigField& field, const std::string& text) {
  training::TrainConfig config;
  // The text's own mistake, if any; nullopt once it is read into `config`.
  const std::optional<std::string> unread = std::visit(
      [&](auto member) -> std::optional<std::string> {
        auto& value = config.*member;
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          const auto [end, failed] = std::from_chars(text.data(), text.data() + text.size(), value);
          if (failed == std::errc() && end == text.data() + text.size()) return std::nullopt;
          const bool threads = field.rule == training::FieldRule::kThreadCount;
          const T low = field.rule == training::FieldRule::kPositive ? T{1}
                        : field.rule == training::FieldRule::kNonNegative || threads
                            ? T{0}
                            : std::numeric_limits<T>::min();
          const T high = threads ? static_cast<T>(kMaxThreads) : std::numeric_limits<T>::max();
          return fmt::format("{} must be a whole number from {} to {}, got {}", field.key, low,
                             high, quote_input(text));
        } else if constexpr (std::is_same_v<T, double> ||
                             std::is_same_v<T, std::optional<double>>) {
          char* end = nullptr;
          const double number = std::strtod(text.c_str(), &end);
          if (end == text.c_str() || *end != '\0') return "";  // CLI11 says it is no number
          value = number;
          return std::nullopt;
        } else {
          return "";  // strings are checked against `allowed` (CLI::IsMember), maps by -D
        }
      },
      field.member);
  if (unread) return *unread;
  try {
    training::check_field(field, config);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
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
  const training::ConfigField* row = &field;  // config_fields() lives as long as the program
  option->check(CLI::Validator([row](std::string& text) { return value_error(*row, text); },
                               /*validator_desc=*/"", "range"));
  flags.given.emplace_back(option, &field);
}

}  // namespace

void add_status_every_option(CLI::App& cmd, int& seconds) {
  cmd.add_option("--status-every", seconds,
                 "With --jobs > 1: a line per running run this often, its step of its total, "
                 "loss, time so far and time left at its pace (default 300; 0 = never)")
      ->type_name("SECONDS")
      ->check(CLI::Range(0, 86400));
}

void add_config_flags(CLI::App& cmd, ConfigFlags& flags) {
  cmd.add_option("--config", flags.config_file,
                 "Settings from a JSON file: an object of config keys, as a run's config.json or "
                 "--print-config writes it; flags given beside it win");
  for (const auto& field : training::config_fields()) add_field_flag(cmd, flags, field);
}

nlohmann::json settings_file(const std::string& path) {
  nlohmann::json settings = read_json_file(path);
  if (!settings.is_object()) {
    throw InputError(fmt::format("--config {}: not a JSON object of settings", path));
  }
  settings.erase(training::kResolvedKey);  // what a run made of its settings, not a setting
  if (settings.contains(training::kConfigFormatKey)) {
    if (settings[training::kConfigFormatKey] != training::kConfigFormat) {
      throw InputError(fmt::format(
          "--config {}: {} is {}; this maskc reads {}", path, training::kConfigFormatKey,
          settings[training::kConfigFormatKey].dump(), training::kConfigFormat));
    }
    settings.erase(training::kConfigFormatKey);
  }
  for (const auto& [key, value] : settings.items()) {
    const bool known =
        std::any_of(training::config_fields().begin(), training::config_fields().end(),
                    [&](const auto& field) { return field.key == key; });
    if (!known) {
      throw InputError(fmt::format(
          "--config {}: '{}' is no setting (`maskc train --help` lists them; docs/settings.md)",
          path, key));
    }
  }
  for (const char* key : {"task", "preset"}) {
    if (settings.contains(key) && !settings[key].is_string()) {
      throw InputError(
          fmt::format("--config {}: {} must be a string, got {}", path, key, settings[key].dump()));
    }
  }
  return settings;
}

nlohmann::json overrides_of(ConfigFlags& flags) {
  flags.config.defines = compile_options(flags.spec_flags).defines;
  const auto all = training::to_json(flags.config);
  nlohmann::json overrides =
      flags.config_file.empty() ? nlohmann::json::object() : settings_file(flags.config_file);
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
