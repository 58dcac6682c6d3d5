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
  SpecFlags spec_flags;  // -D NAME=VALUE, parsed and checked as by compile/show/validate
};

/// Registers one flag per row of the config table on `cmd`, bound to `flags` (which must outlive
/// it): a bool's flag sets the opposite of the default, the map (defines) is -D NAME=VALUE, an
/// optional field is set only when its flag is given, the rest take a value (checked against the
/// row's allowed values, if any; floating values must be finite).
void add_config_flags(CLI::App& cmd, ConfigFlags& flags);

/// The config keys of the flags the user typed, with their parsed values.
nlohmann::json overrides_of(ConfigFlags& flags);

/// The flag of a row as a user reads it: "--lr", "-q/--quiet".
std::string flag_text(const training::ConfigField& field);

}  // namespace maskprior::cli
