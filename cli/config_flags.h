// The flags of `maskc train` that are rows of the config table (train/config.h): registered from
// the table, read back as the config keys the user typed. `maskc train` and `maskc sweep` (whose
// runs take train's flags after `--`) share them.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "cli/spec_flags.h"
#include "train/config.h"

namespace maskprior::cli {

/// The parsed flags: values land in `config`; `given` remembers each config flag's row, so that
/// only flags the user typed override the preset.
struct ConfigFlags {
  training::TrainConfig config;
  std::vector<std::pair<CLI::Option*, const training::ConfigField*>> given;
  SpecFlags spec_flags;     // -D NAME=VALUE, parsed and checked as by compile/show/validate
  std::string config_file;  // --config FILE: settings from a JSON object; flags given win
};

/// Registers one flag per row of the config table on `cmd`, bound to `flags` (which must outlive
/// it): a bool's flag sets the opposite of the default, the map (defines) is -D NAME=VALUE, an
/// optional field is set only when its flag is given, the rest take a value (checked against the
/// row's allowed values, if any; floating values must be finite).
void add_config_flags(CLI::App& cmd, ConfigFlags& flags);

/// `--status-every SECONDS` of `maskc sweep` and `maskc reproduce`, bound to `seconds`: with
/// --jobs > 1, a line per running run that often (0 = never).
void add_status_every_option(CLI::App& cmd, int& seconds);

/// The settings of `--config FILE`: a JSON object of config keys (a run's config.json, whose
/// `resolved` and `config_format` are read past, or --print-config's output). InputError naming
/// the file when it is not such an object or names a key that is no setting.
nlohmann::json settings_file(const std::string& path);

/// The config keys of the flags the user typed, with their parsed values, over the settings of
/// `--config FILE` when given (a flag typed beside it wins).
nlohmann::json overrides_of(ConfigFlags& flags);

/// The flag of a row as a user reads it: "--lr", "-q/--quiet".
std::string flag_text(const training::ConfigField& field);

}  // namespace maskprior::cli
