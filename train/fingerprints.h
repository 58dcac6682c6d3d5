// The fingerprints of a run (fingerprints.json of its folder), taken when the run is created and
// checked by --resume, so that a resumed run is the run it claims to be: config.json as written
// (a copy and its SHA-256) and the SHA-256 of each file the run read (spec, data, test data,
// truth table). No LibTorch here.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "train/config.h"

namespace maskprior::training {

/// The fingerprints of a new run: `config_json` (config.json as written) and the files `config`
/// names, hashed now.
nlohmann::json run_fingerprints(const nlohmann::json& config_json, const TrainConfig& config);

/// Checks a run about to be resumed against the fingerprints taken when it was created:
/// `config_json` is its config.json as read now (before --resume's overrides), `config` the
/// config it resolves to, `config_path` names config.json in messages. InputError naming what
/// changed: a config key with its old and new values, or a file (spec, data, ...) with its path.
void check_fingerprints(const nlohmann::json& fingerprints, const nlohmann::json& config_json,
                        const TrainConfig& config, const std::string& config_path);

}  // namespace maskprior::training
