// `maskc sweep`: a grid over training settings (any key of the config table, train/config.h,
// that says what a run learns: init, lr, spec, data, ...) times seeds, for any task or your own
// data. Each combination's runs go into a folder named by its settings
// (OUT/init=mask,lr=0.001/seed0), resumable like `maskc reproduce` and run by the same machinery
// (experiments/run_plan.h: --jobs, ranks, Slurm array tasks); results.md has one row per
// combination (report/: only seeds pool).
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "train/distributed.h"

namespace maskprior::training {

/// One swept setting: a config.json key and its values, typed as its row of the config table.
struct SweepAxis {
  std::string key;
  std::vector<nlohmann::json> values;
};

/// Parses `KEY=V1,V2,...` (`flag` names the option in messages) (`\,` is a comma inside a value,
/// e.g. a file name holding one). The key must be a row of the config table that says what a run
/// learns (not `seed`, `out`, a map such as `defines`, or an execution setting `--resume` may
/// change), each value of the row's type and among its allowed values; no value twice. InputError
/// naming the key and what it allows otherwise.
SweepAxis parse_axis(const std::string& text, std::string_view flag = "--grid");

/// One combination of the grid.
struct SweepPoint {
  std::string name;         // its folder, from its settings: "init=mask,lr=0.001"
  nlohmann::json settings;  // the swept keys' values
};

/// Parses one combination of a list (`--point KEY=V,KEY=V,...`): each key as parse_axis checks it,
/// with one value (`\,` is a comma inside it) and no key twice. Named as grid_points names a
/// combination ("init=mask,lr=0.001"). InputError otherwise.
SweepPoint parse_point(const std::string& text);

struct SweepOptions {
  std::vector<SweepAxis> grid;     // a Cartesian grid, or
  std::vector<SweepPoint> points;  // a list of combinations (--point), which then replaces it
  nlohmann::json base = nlohmann::json::object();  // every run's settings (maskc train's flags)
  int seeds = 1;
  std::string out;
  int jobs = 1;
  std::optional<World> world;  // split across ranks, as `maskc reproduce`
  int shard_index = 0;         // a Slurm array task: runs i with i % shard_count == shard_index
  int shard_count = 1;
  std::chrono::seconds status_every{0};  // with jobs > 1: a progress line per running run
};

/// Every combination of `grid` (the first axis varying slowest), named by its settings as
/// sweep_points names them, unchecked: the cells a results table covers.
std::vector<SweepPoint> grid_points(const std::vector<SweepAxis>& grid);

/// The combinations the options give, unchecked: their list (InputError when one is given twice),
/// or else every combination of the grid as grid_points makes them.
std::vector<SweepPoint> combinations(const SweepOptions& options);

/// Every combination of the grid or list (the grid's first axis varying slowest), named by its
/// settings (values
/// made safe for a file name: paths by their file name, with a short hash where two would read
/// alike). Each is resolved as its runs will be (resolve_config, check_config, and it must train a
/// step) and its folder name must fit a file name (255 bytes): InputError naming the combination
/// otherwise, before anything is written.
std::vector<SweepPoint> sweep_points(const SweepOptions& options);

/// InputError when a file the runs read (spec, data, test_data, truth_table) is missing.
void check_sweep_inputs(const std::vector<SweepPoint>& points, const SweepOptions& options);

/// Sets up one run of each combination as `maskc train` would before training (check_run: the
/// spec compiled at the run's size and checked against the task and model, the data, the memory
/// it needs), in a child process; InputError naming the first combination that cannot run.
void check_sweep_runs(const std::vector<SweepPoint>& points, const SweepOptions& options);

/// Prints every run of the sweep (folder, finished or not) and an estimate of the time the
/// unfinished ones take, from a few steps of one run of each combination timed in this process
/// (experiments/run_plan.h dry_run_plan; nothing is written). Returns dry_run_plan's result.
nlohmann::json dry_run_sweep(const SweepOptions& options, std::ostream& out);

/// Runs (or resumes, or reuses finished) every run of the sweep (checked first: check_sweep_inputs,
/// check_sweep_runs, and InputError when options.out holds the results of another sweep or
/// command, which its tables would overwrite), writes results.json and
/// results.md (one row per combination) into options.out and prints the tables. Returns
/// results.json's content ("interrupted": true if stopped: rerunning the same command continues).
/// A rank other than 0, or an array task that did not finish the sweep's last run, writes no
/// tables and returns {"interrupted", "tabulated": false}.
nlohmann::json run_sweep(const SweepOptions& options, std::ostream& out);

}  // namespace maskprior::training
