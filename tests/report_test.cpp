#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "io/json_file.h"
#include "render/plot.h"
#include "report/report.h"
#include "runfolder/run_state.h"
#include "tests/test_util.h"

namespace maskprior::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kSource = MASKPRIOR_SOURCE_DIR;

/// A folder of its own for one test's runs; this process removes the folders it made as it exits.
fs::path fresh_dir(const std::string& name) {
  static struct Made {
    std::vector<fs::path> dirs;
    ~Made() {
      for (const fs::path& dir : dirs) fs::remove_all(dir);
    }
  } made;
  made.dirs.push_back(maskprior::testing::unique_temp_dir("maskprior-report-" + name));
  return made.dirs.back();
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// A finished run: config, summary, and metrics with `curve` (step, accuracy) pairs.
void write_run(const fs::path& dir, const json& config, const json& summary,
               const std::vector<std::pair<int, double>>& curve, const std::string& key) {
  fs::create_directories(dir);
  write_json_file((dir / "config.json").string(), config);
  write_json_file((dir / "summary.json").string(), summary);
  std::ofstream metrics(dir / "metrics.jsonl");
  for (const auto& [step, value] : curve) {
    json record = {
        {"step", step}, {key, value}, {"prior_mass", {0.5, 0.7}}, {"mask_drift", step * 1e-4}};
    if (key == "accuracy") record["fourier"] = {{"x0", 0.5}, {"x0x1", value / 2}};
    metrics << record.dump() << "\n";
  }
}

json parity2_config(const std::string& init) {
  return {
      {"task", "parity2"}, {"init", init},        {"spec", kSource + "/specs/gotu/parity2.mask"},
      {"n", 15},           {"preset", "quick"},   {"dim", 64},
      {"depth", 2},        {"heads", 2},          {"head_dim", 16},
      {"mlp", 64},         {"optimizer", "adam"}, {"lr", 1e-3},
      {"batch_size", 256}, {"epochs", 5},         {"device", "cpu"},
      {"threads", 1}};
}

/// parity2: vanilla at 75% and 77% (never 95%), mask at 100% both seeds (95% at step 200);
/// addition at two train fractions (a sweep).
fs::path write_suite() {
  const fs::path root = fresh_dir("suite");
  for (int seed = 0; seed < 2; ++seed) {
    const double vanilla = seed == 0 ? 0.75 : 0.77;
    write_run(root / "parity2-vanilla" / fmt::format("seed{}", seed), parity2_config("vanilla"),
              {{"accuracy", vanilla}, {"steps", 300}, {"wall_seconds", 10.0}},
              {{0, 0.4}, {100, 0.6}, {200, 0.7}, {300, vanilla}}, "accuracy");
    write_run(root / "parity2-mask" / fmt::format("seed{}", seed), parity2_config("mask"),
              {{"accuracy", 1.0},
               {"steps", 300},
               {"prior_mass_init", 0.6},
               {"target_coefficient", 0.5},
               {"prior_mass", {0.8, 0.9}},
               {"mask_drift", {0.01, 0.03}},
               {"wall_seconds", 12.0}},
              {{0, 0.4}, {100, 0.8}, {200, 0.96}, {300, 1.0}}, "accuracy");
  }
  for (double fraction : {0.002, 0.004}) {
    for (const std::string init : {"vanilla", "mask"}) {
      json config = {{"task", "addition"},
                     {"init", init},
                     {"spec", "specs/arith/addition.mask"},
                     {"train_fraction", fraction}};
      write_run(root / fmt::format("addition-{}-{}", fraction, init) / "seed0", config,
                {{"sequence_accuracy", init == "mask" ? 0.6 : 0.1}, {"steps", 50}},
                {{0, 0.0}, {50, init == "mask" ? 0.6 : 0.1}}, "sequence_accuracy");
    }
  }
  fs::create_directories(root / "stopped" / "seed0");  // interrupted runs are left out
  write_json_file((root / "stopped" / "seed0" / "config.json").string(), parity2_config("mask"));
  write_json_file((root / "stopped" / "seed0" / "summary.json").string(), {{"interrupted", true}});
  return root;
}

/// True when `path` is a PNG whose IHDR says width × height.
bool is_png(const fs::path& path, uint32_t width, uint32_t height) {
  const std::string bytes = read_text(path);
  if (bytes.size() < 24 || bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return false;
  auto be32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  return bytes.compare(12, 4, "IHDR") == 0 && be32(16) == width && be32(20) == height;
}

TEST(Report, RowsGroupSeedsAndSkipInterruptedRuns) {
  const std::vector<ReportRow> rows = read_rows(write_suite().string());
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[4].label, "parity2-mask");
  EXPECT_EQ(rows[4].runs.size(), 2u);
  EXPECT_EQ(rows[4].init, "mask");
  EXPECT_EQ(headline_metric(rows[4]), "accuracy");
  EXPECT_EQ(headline_metric(rows[0]), "sequence_accuracy");
  EXPECT_EQ(steps_to(rows[4].runs[0], "accuracy", 0.95), 200);
  EXPECT_EQ(steps_to(rows[5].runs[0], "accuracy", 0.95), std::nullopt);
  // The paper's number belongs to the paper's own mask, not to another design for the task.
  EXPECT_EQ(paper_number(rows[4]), "100");
  ReportRow design = rows[4];
  design.spec = kSource + "/specs/designs/parity2_hard.mask";
  EXPECT_EQ(paper_number(design), "—");
  EXPECT_EQ(paper_number(rows[5]), "≈ 75");
}

TEST(Report, DifferingKeysAreThoseWhoseValuesDiffer) {
  const json a = {{"init", "mask"}, {"lr", 0.001}, {"n", 6}};
  const json b = {{"init", "vanilla"}, {"lr", 0.001}, {"n", 6}, {"warmup", 80}};
  const json c = {{"init", "mask"}, {"lr", 0.001}, {"n", 6}};
  EXPECT_EQ(differing_keys({&a, &b, &c}), (std::vector<std::string>{"init", "warmup"}));
  EXPECT_TRUE(differing_keys({&a, &c}).empty());
  EXPECT_TRUE(differing_keys({&a}).empty());
  EXPECT_TRUE(differing_keys({}).empty());
}

TEST(Report, RowsAndSeedsInNumericOrder) {
  // Folder names sort as text "10pct" < "1pct" < "5pct" and "seed10" < "seed2"; rows and seeds
  // follow the numbers instead.
  const fs::path root = fresh_dir("numeric");
  for (const char* fraction : {"10pct", "1pct", "5pct"}) {
    for (const int seed : {10, 2}) {
      write_run(
          root / fmt::format("multiplication-{}-mask", fraction) / fmt::format("seed{}", seed),
          {{"task", "multiplication"}, {"init", "mask"}, {"device", "auto"}},
          {{"sequence_accuracy", 0.5}, {"steps", 10}, {"device", "cpu"}}, {{0, 0.0}, {10, 0.5}},
          "sequence_accuracy");
    }
  }
  const std::vector<ReportRow> rows = read_rows(root.string());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].label, "multiplication-1pct-mask");
  EXPECT_EQ(rows[1].label, "multiplication-5pct-mask");
  EXPECT_EQ(rows[2].label, "multiplication-10pct-mask");
  ASSERT_EQ(rows[0].runs.size(), 2u);
  EXPECT_EQ(fs::path(rows[0].runs[0].dir).filename(), "seed2");
  EXPECT_EQ(fs::path(rows[0].runs[1].dir).filename(), "seed10");
  // Settings name the device the run used (summary.json), not the configured "auto".
  const std::string text = read_text(write_report({root.string(), kSource, ""}));
  EXPECT_NE(text.find("| 10 | cpu |"), std::string::npos) << text;
  EXPECT_EQ(text.find("| auto |"), std::string::npos) << text;
}

TEST(Report, MdiValidatesTheSpecTheRunKept) {
  // The spec path in config.json is gone (the run came from another machine), and the spec has
  // no `param n`: the report validates the run's own spec.mask, compiled as the run compiled it.
  const fs::path root = fresh_dir("kept-spec");
  json config = parity2_config("mask");
  config["spec"] = "/nowhere/moved/readout-x0.mask";
  const fs::path dir = root / "parity2-mask" / "seed0";
  write_run(dir, config, {{"accuracy", 0.5}, {"steps", 10}}, {{0, 0.5}, {10, 0.5}}, "accuracy");
  std::ofstream(dir / "spec.mask") << "mask readout_x0\ntokens cls, x[15]\ndefault close\n"
                                      "open diagonal\nopen cls -> x[0]\n";
  const std::string text = read_text(write_report({root.string(), kSource, ""}));
  EXPECT_NE(text.find("- `readout-x0.mask`: MDI excluded by the mask"), std::string::npos) << text;
  EXPECT_EQ(text.find("not validated"), std::string::npos) << text;
}

TEST(Report, TablesPaperColumnMdiAndPlots) {
  const fs::path root = write_suite();
  const std::string path = write_report({root.string(), kSource, ""});
  const std::string text = read_text(path);
  // Mean ± sample std over the seeds, the paper's number, steps to 50% / 95%.
  EXPECT_NE(
      text.find(
          "| parity2-vanilla | 2 | 76.00 ± 1.41 | ≈ 75 | — | — | 100 ± 0 (2/2) | never (0/2)"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("| parity2-mask | 2 | 100.00 ± 0.00 | 100 | 0.5 ± 0 | — | 100 ± 0 (2/2) | "
                      "200 ± 0 (2/2) | "
                      "0.6 ± 0 → 0.85 ± 0 | 0.02 ± 0 | 12 |"),
            std::string::npos)
      << text;
  // The paper's addition number only at its own train fraction (0.4%).
  EXPECT_NE(text.find("| addition-0.004-mask | 1 | 60.00 | 77.49 |"), std::string::npos) << text;
  EXPECT_NE(text.find("| addition-0.002-mask | 1 | 60.00 | — |"), std::string::npos) << text;
  EXPECT_NE(text.find("`x0 + x1 - 1`"), std::string::npos) << text;
  EXPECT_NE(text.find("75.00% on the cube"), std::string::npos) << text;
  EXPECT_NE(text.find("`parity2.mask`: MDI not excluded by the mask"), std::string::npos) << text;
  // The interrupted run is no row, only named as not finished.
  EXPECT_EQ(text.find("| stopped"), std::string::npos) << text;
  EXPECT_NE(text.find("- `stopped/seed0`: stopped"), std::string::npos) << text;
  for (const char* plot : {"parity2-final", "parity2-accuracy", "parity2-prior-mass",
                           "parity2-mask-drift", "addition-sweep"}) {
    const fs::path png = root / "plots" / (std::string(plot) + ".png");
    EXPECT_TRUE(is_png(png, 900, 560)) << png;
    EXPECT_NE(text.find(fmt::format("(plots/{}.png)", plot)), std::string::npos) << plot;
  }
  EXPECT_FALSE(fs::exists(root / "plots" / "addition-final.png"));  // a sweep instead
  // The learned Fourier coefficients of both rows: one figure, a panel per row.
  EXPECT_NE(
      text.find("![parity2: learned Fourier coefficients, panels: parity2-mask, parity2-vanilla]"
                "(plots/parity2-fourier.png)"),
      std::string::npos)
      << text;
  EXPECT_TRUE(is_png(root / "plots" / "parity2-fourier.png", 1800, 560));
}

// "Does the prior help?": each prior row against the vanilla row of the same settings, seed K
// against seed K over the seeds both have, with a 95% paired t-interval; a prior row without
// such a vanilla row (another lr) gets none.
TEST(Report, ThePriorAgainstVanillaSeedBySeed) {
  const fs::path root = fresh_dir("help");
  const double vanilla[] = {0.75, 0.77, 0.70}, mask[] = {1.0, 0.9, 0.70, 0.5};
  for (int seed = 0; seed < 4; ++seed) {
    auto config = [&](const std::string& init, double lr) {
      json c = parity2_config(init);
      c["seed"] = seed;
      c["lr"] = lr;
      return c;
    };
    if (seed < 3) {  // seed 3 has no vanilla run: it is not paired
      write_run(root / "v" / fmt::format("seed{}", seed), config("vanilla", 1e-3),
                {{"accuracy", vanilla[seed]}, {"steps", 10}}, {{10, vanilla[seed]}}, "accuracy");
    }
    write_run(root / "m" / fmt::format("seed{}", seed), config("mask", 1e-3),
              {{"accuracy", mask[seed]}, {"steps", 10}}, {{10, mask[seed]}}, "accuracy");
    write_run(root / "m-fast" / fmt::format("seed{}", seed), config("mask", 1e-2),
              {{"accuracy", 0.9}, {"steps", 10}}, {{10, 0.9}}, "accuracy");
  }
  const std::string text = read_text(write_report({root.string(), kSource, ""}));
  EXPECT_NE(text.find("**Does the prior help?**"), std::string::npos) << text;
  // +25, +13, 0 points: mean 12.67, sample std 12.50, t(0.975, 2) = 4.303.
  EXPECT_NE(text.find("| m | v | 3 | +12.67 [-18.40, +43.73] | 0: +25.00, 1: +13.00, 2: +0.00 | "
                      "2 of 3 |"),
            std::string::npos)
      << text;
  // Seed 0 is 25 points up: not a positive control by the default 30 points on each of 3 seeds.
  EXPECT_NE(text.find("| 2 of 3 | no (seed 0) |"), std::string::npos) << text;
  EXPECT_EQ(text.find("| m-fast | v |"), std::string::npos) << text;
}

// A Boolean task's prior is judged by its unseen points (the family's judged_by), while the
// tables stay on accuracy; --metric judges by the metric asked for.
TEST(Report, BooleanPriorsAreJudgedOnTheUnseenPoints) {
  const fs::path root = fresh_dir("judged");
  const double vanilla[][2] = {{0.60, 0.30}, {0.62, 0.28}}, mask[][2] = {{1.0, 1.0}, {0.9, 0.7}};
  for (int seed = 0; seed < 2; ++seed) {
    for (const std::string init : {"vanilla", "mask"}) {
      json config = parity2_config(init);
      config["seed"] = seed;
      const double* at = init == "mask" ? mask[seed] : vanilla[seed];
      write_run(root / init / fmt::format("seed{}", seed), config,
                {{"accuracy", at[0]}, {"unseen_accuracy", at[1]}, {"steps", 10}}, {{10, at[0]}},
                "accuracy");
    }
  }
  const std::string judged = read_text(write_report({root.string(), kSource, ""}));
  EXPECT_NE(judged.find("the difference in `unseen_accuracy` (points of %), what this task "
                        "family is judged by (`--metric accuracy` judges by the tables' metric "
                        "instead)"),
            std::string::npos)
      << judged;
  // +70 and +42 points on the unseen points (+40 and +28 overall).
  EXPECT_NE(judged.find("| mask | vanilla | 2 | +56.00 [-121.88, +233.88] | 0: +70.00, 1: +42.00 "
                        "| 2 of 2 |"),
            std::string::npos)
      << judged;
  EXPECT_NE(judged.find("| 2 of 2 | not judged (2 seeds) |"), std::string::npos) << judged;
  ReportOptions options{root.string(), kSource, ""};
  options.control.seeds = 2;
  const std::string two = read_text(write_report(options));
  EXPECT_NE(two.find("| 2 of 2 | **yes** |"), std::string::npos) << two;
  EXPECT_NE(two.find("at least 30 points on each seed, over at least 2 seeds"), std::string::npos)
      << two;
  options.control.points = 50;
  const std::string fifty = read_text(write_report(options));
  EXPECT_NE(fifty.find("| 2 of 2 | no (seed 1) |"), std::string::npos) << fifty;
  for (const double points : {0.0, -1.0, 101.0, std::nan("")}) {
    options.control.points = points;
    EXPECT_THROW(write_report(options), InputError) << points;
  }
  const std::string overall = read_text(write_report({root.string(), kSource, "accuracy"}));
  EXPECT_NE(overall.find("the difference in `accuracy` (points of %) over"), std::string::npos)
      << overall;
  EXPECT_NE(overall.find("| 0: +40.00, 1: +28.00 |"), std::string::npos) << overall;
}

// Two study cells that differ in an execution setting only (the precision) have rows of equal
// settings: each prior row is compared with the vanilla row of its own cell.
TEST(Report, ThePriorAgainstTheVanillaOfItsOwnCell) {
  const fs::path root = fresh_dir("cells");
  for (const auto& [cell, precision, base] :
       {std::tuple{"bf16", "bf16", 0.5}, std::tuple{"fp32", "fp32", 0.2}}) {
    for (const std::string init : {"vanilla", "mask"}) {
      json config = parity2_config(init);
      config["precision"] = precision;
      config["seed"] = 0;
      const double accuracy = init == "mask" ? base + 0.1 : base;
      write_run(root / cell / "runs" / ("init=" + init) / "seed0", config,
                {{"accuracy", accuracy}, {"steps", 10}}, {{10, accuracy}}, "accuracy");
    }
  }
  const std::string text = read_text(write_report({root.string(), kSource, ""}));
  EXPECT_NE(text.find("| bf16/runs/init=mask | bf16/runs/init=vanilla | 1 | +10.00 |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| fp32/runs/init=mask | fp32/runs/init=vanilla | 1 | +10.00 |"),
            std::string::npos)
      << text;
}

// The final figure numbers its runs when their names would run into each other below the axis,
// and keys the numbers under it; a few short names stay as they are.
TEST(Report, CrowdedRunNamesAreNumberedWithAKey) {
  const fs::path root = fresh_dir("crowded");
  for (int i = 0; i < 12; ++i) {
    json config = parity2_config("vanilla");
    config["lr"] = 1e-4 * (i + 1);
    write_run(root / fmt::format("a-long-folder-name-for-the-learning-rate-{}", i) / "seed0",
              config, {{"accuracy", 0.5}, {"steps", 10}}, {{10, 0.5}}, "accuracy");
  }
  const std::string text = read_text(write_report({root.string(), kSource, ""}));
  EXPECT_NE(text.find("(plots/parity2-final.png)\n\nRuns in the figure above: 1 = "
                      "a-long-folder-name-for-the-learning-rate-0, 2 = "),
            std::string::npos)
      << text;
  const fs::path few = write_suite();
  EXPECT_EQ(read_text(write_report({few.string(), kSource, ""})).find("Runs in the figure above"),
            std::string::npos);
}

// Runs over several sizes: a table of the metric at each size (trained sizes marked) and one
// plot against the size, a line per row; mean ± std over the seeds that were tested there.
TEST(Report, AccuracyPerSizeTableAndPlot) {
  const fs::path root = fresh_dir("sizes");
  for (const std::string init : {"vanilla", "mask"}) {
    for (int seed = 0; seed < 2; ++seed) {
      const json config = {{"task", "addition"},
                           {"init", init},
                           {"digits", "1..2"},
                           {"test_digits", "5,20"},
                           {"spec", "specs/arith/addition.mask"}};
      const double long_accuracy = init == "mask" ? 0.5 + 0.1 * seed : 0.0;
      json by_length = {
          {"2", {{"sequence_accuracy", 1.0}, {"train_size", 100}, {"test_size", 10}}},
          {"5", {{"sequence_accuracy", init == "mask" ? 0.9 : 0.2}, {"train_size", 0}}},
          {"20", {{"sequence_accuracy", long_accuracy}, {"train_size", 0}}}};
      write_run(root / init / fmt::format("seed{}", seed), config,
                {{"sequence_accuracy", 0.5}, {"steps", 10}, {"by_length", by_length}},
                {{0, 0.1}, {10, 0.5}}, "sequence_accuracy");
    }
  }
  const std::string text = read_text(write_report({root.string(), kSource, ""}));
  EXPECT_NE(text.find("| run | 2* | 5 | 20 |"), std::string::npos) << text;  // numeric order
  EXPECT_NE(text.find("| mask | 100.00 ± 0.00 | 90.00 ± 0.00 | 55.00 ± 7.07 |"), std::string::npos)
      << text;
  EXPECT_NE(text.find("| vanilla | 100.00 ± 0.00 | 20.00 ± 0.00 | 0.00 ± 0.00 |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(plots/addition-by-length.png)"), std::string::npos) << text;
  EXPECT_TRUE(is_png(root / "plots" / "addition-by-length.png", 900, 560));
  // Runs of one size have no such table.
  const std::string plain = read_text(write_report({write_suite().string(), kSource, ""}));
  EXPECT_EQ(plain.find("at each size"), std::string::npos);
}

/// The files in root/plots, sorted.
std::vector<std::string> plot_files(const fs::path& root) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(root / "plots")) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A section draws the metric against every setting its rows differ in as one figure, a panel per
// setting, and the Fourier coefficients as one figure, a panel per row; a figure of more than 50
// panels goes on in a second file.
TEST(Report, FiguresHaveAPanelPerSettingAndPerRow) {
  const fs::path root = fresh_dir("panels");
  for (const auto& [lr, dim] : {std::pair{1e-3, 64}, {1e-2, 64}, {1e-3, 32}}) {
    json config = parity2_config("mask");
    config["lr"] = lr;
    config["dim"] = dim;
    write_run(root / fmt::format("lr{}-dim{}", lr, dim) / "seed0", config,
              {{"accuracy", 0.9}, {"steps", 100}}, {{0, 0.5}, {100, 0.9}}, "accuracy");
  }
  const std::string text = read_text(write_report({root.string(), kSource, ""}));
  EXPECT_NE(
      text.find(
          "![parity2: accuracy against a setting, panels: dim, lr](plots/parity2-by-setting.png)"),
      std::string::npos)
      << text;
  EXPECT_TRUE(is_png(root / "plots" / "parity2-by-setting.png", 1800, 560));
  EXPECT_TRUE(is_png(root / "plots" / "parity2-fourier.png", 1800, 1120));
  EXPECT_EQ(plot_files(root),
            (std::vector<std::string>{"parity2-accuracy.png", "parity2-by-setting.png",
                                      "parity2-final.png", "parity2-fourier.png",
                                      "parity2-mask-drift.png", "parity2-prior-mass.png"}));

  const fs::path many = fresh_dir("many-panels");
  for (int k = 0; k < 51; ++k) {
    json config = parity2_config("mask");
    config["lr"] = 1e-4 * (k + 1);
    write_run(many / fmt::format("lr{}", k) / "seed0", config, {{"accuracy", 0.9}, {"steps", 100}},
              {{0, 0.5}, {100, 0.9}}, "accuracy");
  }
  const std::string split = read_text(write_report({many.string(), kSource, ""}));
  EXPECT_NE(split.find(", lr49 (1 of 2)](plots/parity2-fourier.png)\n\n![parity2: learned "
                       "Fourier coefficients, panels: lr50 (2 of 2)](plots/parity2-fourier-2.png)"),
            std::string::npos)
      << split;
  EXPECT_TRUE(is_png(many / "plots" / "parity2-fourier.png", 1800, 25 * 560));
  EXPECT_TRUE(is_png(many / "plots" / "parity2-fourier-2.png", 900, 560));
}

// cyclic3 at n = 15 records 2^15 coefficients an evaluation: the plot draws the largest few,
// and says so, instead of a curve per coefficient.
TEST(Report, AFourierPlotDrawsTheLargestCoefficients) {
  const fs::path root = fresh_dir("fourier");
  const fs::path run = root / "parity2-mask" / "seed0";
  write_run(run, parity2_config("mask"), {{"accuracy", 0.75}, {"steps", 100}}, {}, "accuracy");
  std::ofstream metrics(run / "metrics.jsonl");
  for (int step : {0, 100}) {
    json fourier = json::object();
    for (int k = 0; k < 4096; ++k) fourier[fmt::format("{{{}}}", k)] = k == 77 ? 0.9 : 1e-3 * k;
    metrics << json{{"step", step}, {"accuracy", 0.75}, {"fourier", fourier}}.dump() << "\n";
  }
  metrics.close();
  const std::string text = read_text(write_report({root.string(), kSource, ""}));
  EXPECT_NE(
      text.find("![parity2: learned Fourier coefficients, panels: parity2-mask (the 8 largest "
                "of 4096)](plots/parity2-fourier.png)"),
      std::string::npos)
      << text;
  EXPECT_TRUE(is_png(root / "plots" / "parity2-fourier.png", 900, 560));
}

TEST(Report, ErrorsNameTheFolderOrFile) {
  const fs::path empty = fresh_dir("empty");
  EXPECT_NE(testing::input_error([&] { read_rows(empty.string()); }).find("holds no finished run"),
            std::string::npos);
  EXPECT_NE(
      testing::input_error([&] { read_rows((empty / "nope").string()); }).find("is not a folder"),
      std::string::npos);
  const fs::path run = empty / "row" / "seed0";
  fs::create_directories(run);
  write_json_file((run / "config.json").string(), parity2_config("mask"));
  std::ofstream(run / "summary.json") << "{ not json";
  EXPECT_NE(testing::input_error([&] { read_rows(empty.string()); }).find("summary.json"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(empty / "REPORT.md"));
}

// A study in progress: the report shows the finished runs and names each run that has not
// finished, running (its lock held) or stopped, instead of silently showing fewer seeds.
TEST(Report, UnfinishedRunsAreNamedNotReported) {
  const fs::path root = write_suite();  // holds stopped/seed0, interrupted
  const fs::path running = root / "parity2-mask" / "seed7";
  fs::create_directories(running);
  std::ofstream(running / ".lock") << 12345;
  json config = parity2_config("mask");
  config["resolved"] = {{"steps", 100}};
  write_json_file((running / "config.json").string(), config);
  std::ofstream(running / "steps.jsonl") << R"({"loss":0.5,"seconds":30.0,"step":20})"
                                         << "\n";
  std::vector<runfolder::Unfinished> unfinished;
  const std::string text =
      read_text(write_report({root.string(), kSource, ""}, nullptr, &unfinished));
  ASSERT_EQ(unfinished.size(), 2u) << text;
  EXPECT_EQ(unfinished[0].state, runfolder::RunState::kRunning);
  EXPECT_EQ(unfinished[1].state, runfolder::RunState::kStopped);
  EXPECT_NE(text.find("**2 runs not finished**"), std::string::npos) << text;
  // How far each has got: step of total, loss, time so far and left at its pace (30 s for 20).
  EXPECT_NE(text.find("- `parity2-mask/seed7`: running, step 20 of 100, loss 0.5, 30 s, about 2.0 "
                      "min left\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("- `stopped/seed0`: stopped, "), std::string::npos) << text;
  EXPECT_NE(text.find("| parity2-mask | 2 |"), std::string::npos) << "seed 7 is not pooled";

  // A folder of unfinished runs only: the error says they are there, not just "no run".
  const fs::path only = fresh_dir("unfinished-only");
  fs::create_directories(only / "seed0");
  write_json_file((only / "seed0" / "config.json").string(), parity2_config("vanilla"));
  const std::string error = testing::input_error([&] { read_rows(only.string()); });
  EXPECT_NE(error.find("seed0: not finished (stopped, no step logged yet)"), std::string::npos)
      << error;
  EXPECT_TRUE(runfolder::unfinished_runs((only / "nope").string()).empty());
}

/// A run of docs/your-data.md: `--data train.txt --spec reverse.mask --predict c`.
json data_config(const std::string& init) {
  return {{"task", ""},       {"data", "examples/your-data/train.txt"},
          {"predict", "c"},   {"spec", "examples/your-data/reverse.mask"},
          {"init", init},     {"seed", 0},
          {"lr", 1e-3},       {"threads", 2},
          {"device", "auto"}, {"out", "runs/" + init}};
}

TEST(Report, RunFoldersOfOneFolderWithOtherSettingsAreSeparateRows) {
  // docs/your-data.md: runs/vanilla and runs/mask, each a run folder, side by side.
  const fs::path root = fresh_dir("your-data");
  for (const std::string init : {"vanilla", "mask"}) {
    json config = data_config(init);
    config["epochs"] = 5;  // asked for; 100 steps over 20 lines of batch 64 ran 100 epochs
    config["resolved"] = {{"threads", 1}, {"steps", 100}};
    write_run(root / init, config,
              {{"sequence_accuracy", init == "mask" ? 0.9 : 0.2},
               {"train_sequence_accuracy", 1.0},
               {"token_accuracy", init == "mask" ? 0.95 : 0.5},
               {"data", "/home/u/examples/your-data/train.txt"},
               {"train_size", 20},
               {"test_size", 1000},
               {"epoch", 100.0},
               {"steps", 100}},
              {{0, 0.0}, {100, init == "mask" ? 0.9 : 0.2}}, "sequence_accuracy");
  }
  const std::vector<ReportRow> rows = read_rows(root.string());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].label, "init=mask");
  EXPECT_EQ(rows[1].label, "init=vanilla");
  EXPECT_EQ(rows[0].runs.size(), 1u);
  EXPECT_EQ(rows[0].subject, "train.txt");
  const std::string text = read_text(write_report({root.string(), kSource, ""}));
  // The heading and the plots are named after the data file and the spec; the table shows the
  // training rows' accuracy beside the test's and the family's other informative metric (token
  // accuracy), and no paper column (the paper has no number for your own data).
  EXPECT_NE(text.find("## train.txt with reverse.mask\n"), std::string::npos) << text;
  EXPECT_NE(text.find("| run | seeds | sequence_accuracy % | train % | token acc % |"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("paper |"), std::string::npos) << text;
  EXPECT_NE(text.find("| init=mask | 1 | 90.00 | 100.00 | 95.00 |"), std::string::npos) << text;
  EXPECT_NE(text.find("| init=vanilla | 1 | 20.00 | 100.00 | 50.00 |"), std::string::npos) << text;
  // Settings: the swept setting as a column, the data file with its examples, epochs and threads
  // as they ran (not the request).
  EXPECT_NE(text.find("| run | init | preset | data |"), std::string::npos) << text;
  EXPECT_NE(text.find("| init=mask | mask | — | train.txt (20 train, 1000 test) |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| 0.001 | — | 100 | 100 | auto | 1 |"), std::string::npos) << text;
  EXPECT_TRUE(is_png(root / "plots" / "train-txt-reverse-mask-final.png", 900, 560));
}

TEST(Report, OnlySeedsAndExecutionSettingsPool) {
  // One folder: seeds 0 and 1 of lr 1e-3 (on different thread counts and devices), seed 0 of lr
  // 1e-2, and seed 0 of lr 1e-3 with another spec source (its SHA-256): three rows, never one.
  const fs::path root = fresh_dir("mixed");
  auto run = [&](const std::string& name, int seed, double lr, int threads, const char* sha) {
    json config = data_config("mask");
    config["seed"] = seed;
    config["lr"] = lr;
    config["threads"] = threads;
    config["device"] = threads == 1 ? "cpu" : "auto";
    write_run(root / "s" / name, config,
              {{"sequence_accuracy", lr * 100 + seed * 0.01}, {"spec_sha256", sha}, {"steps", 9}},
              {{0, 0.0}}, "sequence_accuracy");
  };
  run("a", 0, 1e-3, 1, "aaaa");
  run("b", 1, 1e-3, 4, "aaaa");
  run("c", 0, 1e-2, 1, "aaaa");
  run("d", 0, 1e-3, 1, "bbbbbbbbbbbbbbbbbbbb");
  const std::vector<ReportRow> rows = read_rows(root.string());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].label, "s lr=0.001, spec_sha256=aaaa");
  EXPECT_EQ(rows[0].runs.size(), 2u);
  EXPECT_EQ(rows[1].label, "s lr=0.01, spec_sha256=aaaa");
  EXPECT_EQ(rows[2].label, "s lr=0.001, spec_sha256=bbbbbbbbbbbb");
  for (const ReportRow& row : rows) {
    for (const RunRecord& r : row.runs) EXPECT_EQ(settings_of(r), row.settings) << r.dir;
  }
  EXPECT_FALSE(rows[0].settings.contains("seed"));
  EXPECT_FALSE(rows[0].settings.contains("threads"));
  EXPECT_FALSE(rows[0].settings.contains("out"));
}

// A run folder written before config.json left out the settings a family does not read (every
// key, no `resolved`) pools with one written after (no operand_order, data, ... but `resolved`
// and a step-log setting); a setting that differs still makes its own row.
TEST(Report, OlderAndNewerConfigsOfOneSettingPool) {
  const fs::path root = fresh_dir("formats");
  json older = parity2_config("mask");
  older["seed"] = 0;
  older.update(json{{"operand_order", "msb"},
                    {"answer_order", "lsb"},
                    {"loss_rows", "answer"},
                    {"data", ""},
                    {"test_data", ""},
                    {"predict", ""},
                    {"truth_table", ""}});
  json newer = parity2_config("mask");
  newer["seed"] = 1;
  newer["log_every"] = 5;
  newer["resolved"] = {{"device", "cpu"}, {"mask_open", 10.0}, {"mask_close", -10.0}};
  json other = newer;
  other["seed"] = 2;
  other["lr"] = 0.1;
  write_run(root / "s" / "seed0", older, {{"accuracy", 0.9}, {"steps", 9}}, {{0, 0.5}}, "accuracy");
  write_run(root / "s" / "seed1", newer, {{"accuracy", 0.8}, {"steps", 9}}, {{0, 0.5}}, "accuracy");
  write_run(root / "s" / "seed2", other, {{"accuracy", 0.7}, {"steps", 9}}, {{0, 0.5}}, "accuracy");
  const std::vector<ReportRow> rows = read_rows(root.string());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].runs.size(), 2u);
  EXPECT_EQ(rows[0].label, "s lr=0.001");
  EXPECT_EQ(rows[1].label, "s lr=0.1");
  for (const char* key : {"operand_order", "data", "resolved", "log_every"}) {
    EXPECT_FALSE(rows[0].settings.contains(key)) << key;
  }
}

// A folder grown by a later build: seed 0's config.json was written before a setting existed
// (no qk_opt_sequences), seeds 1 and 2 record its default; one row of three seeds. In a folder
// whose runs record two values, the run without it belongs to neither: three rows.
TEST(Report, ASettingAddedLaterDoesNotSplitAFolder) {
  const fs::path root = fresh_dir("grown");
  auto run = [&](const std::string& folder, int seed, const json& sequences) {
    json config = parity2_config("mask");
    config["seed"] = seed;
    if (!sequences.is_null()) config["qk_opt_sequences"] = sequences;
    write_run(root / folder / fmt::format("seed{}", seed), config,
              {{"accuracy", 0.5 + 0.1 * seed}, {"steps", 9}}, {{0, 0.5}}, "accuracy");
  };
  run("grown", 0, json());
  run("grown", 1, 64);
  run("grown", 2, 64);
  run("mixed", 0, json());
  run("mixed", 1, 64);
  run("mixed", 2, 32);
  const std::vector<ReportRow> rows = read_rows(root.string());
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].label, "grown");
  EXPECT_EQ(rows[0].runs.size(), 3u);
  EXPECT_EQ(rows[0].settings.value("qk_opt_sequences", 0), 64);
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(rows[i].runs.size(), 1u) << rows[i].label;
}

TEST(Report, MetricChoosesTheColumnAndUnknownMetricsAreErrors) {
  const fs::path root = write_suite();
  ReportOptions options{root.string(), kSource, "steps"};
  const std::string text = read_text(write_report(options));
  EXPECT_NE(text.find("`steps` of the last evaluation"), std::string::npos) << text;
  EXPECT_NE(text.find("| parity2-mask | 2 | 300 ± 0 | — |"), std::string::npos) << text;
  options.metric = "no_such_metric";
  fs::remove(root / "REPORT.md");
  const std::string error = testing::input_error([&] { write_report(options); });
  EXPECT_NE(error.find("'no_such_metric'"), std::string::npos) << error;
  EXPECT_NE(error.find("sequence_accuracy"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(root / "REPORT.md"));
}

TEST(Plot, RefusesEmptyAndMismatchedSeries) {
  PlotSpec plot;
  plot.title = "t";
  plot.series.push_back({"a", {1, 2}, {NAN, NAN}, {}, {}, false});
  const fs::path dir = fresh_dir("plot");
  EXPECT_NE(testing::input_error([&] {
              write_plot_png((dir / "a.png").string(), plot);
            }).find("no finite point"),
            std::string::npos);
  plot.series[0].y = {1};
  EXPECT_NE(testing::input_error([&] {
              write_plot_png((dir / "a.png").string(), plot);
            }).find("mismatched lengths"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "a.png"));
  plot.series[0].y = {1, 3};
  write_plot_png((dir / "a.png").string(), plot);
  EXPECT_TRUE(is_png(dir / "a.png", 900, 560));
}

// Folder names and values are data: control characters, invalid UTF-8, `|`, HTML and brackets from
// a folder name reach neither the terminal, the Markdown, nor PLplot (which aborts on invalid
// UTF-8) as they are; the table keeps its columns and every plot is drawn.
TEST(Report, FolderNamesAndValuesAreInert) {
  const fs::path root = fresh_dir("hostile");
  const std::string evil = "evil\x1b[31m|<b>x</b>](y)\xff\xc0\x80#u";
  json config = parity2_config("mask");
  config["host_note"] = "<script>alert(1)</script>";  // an unknown key: a setting that differs
  write_run(root / evil / "seed0", config, {{"accuracy", 0.9}, {"steps", 300}},
            {{0, 0.5}, {300, 0.9}}, "accuracy");
  write_run(root / "plain" / "seed0", parity2_config("mask"), {{"accuracy", 0.8}, {"steps", 300}},
            {{0, 0.5}, {300, 0.8}}, "accuracy");
  const std::string text = read_text(write_report({root.string(), kSource, ""}));
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.find("<b>"), std::string::npos);
  EXPECT_EQ(text.find("<script>"), std::string::npos);
  EXPECT_EQ(text.find('\xff'), std::string::npos);
  EXPECT_NE(text.find("evil\\x1b(31m/&lt;b&gt;x&lt;/b&gt;)(y)\\xff\\xc0\\x80#u"), std::string::npos)
      << text;
  // Every row of every table has as many cells as the table's header.
  std::istringstream lines(text);
  int64_t header_cells = -1;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("|")) {
      header_cells = -1;
      continue;
    }
    const auto cells = std::count(line.begin(), line.end(), '|');
    if (header_cells < 0) header_cells = cells;
    EXPECT_EQ(cells, header_cells) << line;
  }
  EXPECT_TRUE(is_png(root / "plots" / "parity2-final.png", 900, 560));
}

// A plots/ symlink is not followed out of DIR: the report refuses it and writes nothing.
TEST(Report, APlotsSymlinkIsRefused) {
  const fs::path root = write_suite();
  const fs::path outside = fresh_dir("outside");
  fs::create_directory_symlink(outside, root / "plots");
  const std::string error = testing::input_error([&] {
    write_report({root.string(), kSource, ""});
  });
  EXPECT_NE(error.find("plots is a symlink"), std::string::npos) << error;
  EXPECT_TRUE(fs::is_empty(outside));
  EXPECT_FALSE(fs::exists(root / "REPORT.md"));
}

// One damaged run is listed as left out, with what is wrong, instead of failing the report; a
// value no run can have (1e308, a negative step) is flagged, never averaged into an "inf".
TEST(Report, DamagedRunsAreLeftOutAndNamed) {
  const fs::path root = write_suite();
  const fs::path bad = root / "damaged";
  fs::create_directories(bad / "json");
  write_json_file((bad / "json" / "config.json").string(), parity2_config("mask"));
  std::ofstream(bad / "json" / "summary.json") << "{ not json";
  write_run(bad / "huge", parity2_config("mask"), {{"accuracy", 1e308}, {"steps", 300}}, {{0, 0.5}},
            "accuracy");
  write_run(bad / "steps", parity2_config("mask"), {{"accuracy", 0.5}, {"steps", 300}},
            {{0, 0.5}, {-5, 0.6}}, "accuracy");
  write_run(bad / "object", json::array({1, 2}), {{"accuracy", 0.5}}, {}, "accuracy");
  write_run(bad / "family", {{"task", "no-such-task"}}, {{"accuracy", 0.5}}, {}, "accuracy");
  std::vector<LeftOut> left_out;
  const std::string text = read_text(write_report({root.string(), kSource, ""}, &left_out));
  ASSERT_EQ(left_out.size(), 5u) << text;
  for (const char* what :
       {"summary.json: not valid JSON", "'accuracy' is 1e+308", "record 2 has step -5",
        "config.json: not a JSON object", "no-such-task"}) {
    EXPECT_NE(text.find(what), std::string::npos) << what << "\n" << text;
  }
  EXPECT_NE(text.find("5 runs left out"), std::string::npos);
  EXPECT_EQ(text.find("inf"), std::string::npos);
  EXPECT_NE(text.find("| parity2-mask | 2 |"), std::string::npos) << "the others are reported";
  // Without a list to put them in (a caller that wants every run), the first one is an error.
  EXPECT_NE(testing::input_error([&] { read_rows(root.string()); }).find("damaged"),
            std::string::npos);
}

// Two copies of one seed's run are one seed, not two (a report of "2 seeds, 75.00 ± 0.00"): the
// copy is left out and named.
TEST(Report, ACopiedRunIsOneSeed) {
  const fs::path root = fresh_dir("copied");
  json config = parity2_config("vanilla");
  config["seed"] = 0;
  for (const char* name : {"seed0", "seed0-copy"}) {
    write_run(root / "parity2" / name, config, {{"accuracy", 0.75}, {"steps", 300}, {"seed", 0}},
              {{0, 0.5}, {300, 0.75}}, "accuracy");
  }
  config["seed"] = 1;
  write_run(root / "parity2" / "seed1", config, {{"accuracy", 0.25}, {"steps", 300}, {"seed", 1}},
            {{0, 0.5}, {300, 0.25}}, "accuracy");
  std::vector<LeftOut> left_out;
  const std::vector<ReportRow> rows = read_rows(root.string(), &left_out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].runs.size(), 2u) << "seeds 0 and 1";
  ASSERT_EQ(left_out.size(), 1u);
  EXPECT_NE(left_out[0].reason.find("seed0-copy: seed 0 again, as in"), std::string::npos)
      << left_out[0].reason;
  const std::string text = read_text(write_report({root.string(), kSource, ""}, &left_out));
  EXPECT_NE(text.find("| parity2 | 2 | 50.00 ± 35.36"), std::string::npos) << text;
}

// A metrics.jsonl beyond the report's cap is refused with the limit, not read into memory.
TEST(Report, MetricsBeyondTheCapAreRefused) {
  const fs::path run = fresh_dir("big") / "seed0";
  write_run(run, parity2_config("mask"), {{"accuracy", 0.5}}, {{0, 0.5}, {100, 0.6}, {200, 0.7}},
            "accuracy");
  const std::string error = testing::input_error([&] { read_run(run.string(), 100); });
  EXPECT_NE(error.find("over the limit"), std::string::npos) << error;
  EXPECT_NE(error.find("metrics.jsonl"), std::string::npos) << error;
  EXPECT_TRUE(read_run(run.string()).has_value());
}

// A band shades the spread of a learning curve: the same curve with a band is another picture
// than without, and a band over points with no spread (NaN) is skipped, not drawn.
TEST(Plot, BandsShadeTheSpread) {
  const fs::path dir = fresh_dir("plot-band");
  PlotSpec plot;
  plot.title = "curve";
  plot.series.push_back({"mask", {0, 100, 200}, {0.2, 0.6, 0.9}, {}, {}, false});
  write_plot_png((dir / "plain.png").string(), plot);
  plot.series[0].low = {0.1, 0.4, NAN};
  plot.series[0].high = {0.3, 0.8, NAN};
  plot.series[0].band = true;
  write_plot_png((dir / "band.png").string(), plot);
  EXPECT_TRUE(is_png(dir / "band.png", 900, 560));
  EXPECT_NE(read_text(dir / "plain.png"), read_text(dir / "band.png"));
  plot.series[0].low = {NAN, NAN, NAN};
  plot.series[0].high = {NAN, NAN, NAN};
  write_plot_png((dir / "none.png").string(), plot);
  EXPECT_EQ(read_text(dir / "plain.png"), read_text(dir / "none.png"));
}

// Small multiples: panels two a row, each as large as a plot alone, in one file; a panel that
// cannot be drawn is an error before anything is written.
TEST(Plot, PanelsShareOneFile) {
  const fs::path dir = fresh_dir("plot-panels");
  std::vector<PlotSpec> panels(3);
  for (size_t i = 0; i < panels.size(); ++i) {
    panels[i].title = fmt::format("panel {}", i);
    panels[i].series.push_back({"a", {0, 1, 2}, {1, 2, 1.5 + static_cast<double>(i)}, {}, {}});
  }
  write_plots_png((dir / "three.png").string(), panels);
  EXPECT_TRUE(is_png(dir / "three.png", 1800, 1120));
  write_plots_png((dir / "column.png").string(), panels, /*columns=*/1);
  EXPECT_TRUE(is_png(dir / "column.png", 900, 1680));
  write_plots_png((dir / "one.png").string(), {panels[0]});
  EXPECT_TRUE(is_png(dir / "one.png", 900, 560));
  write_plot_png((dir / "alone.png").string(), panels[0]);
  EXPECT_EQ(read_text(dir / "one.png"), read_text(dir / "alone.png"));

  panels[1].series[0].y = {1};
  EXPECT_NE(testing::input_error([&] {
              write_plots_png((dir / "bad.png").string(), panels);
            }).find("'a' of 'panel 1' has mismatched lengths"),
            std::string::npos);
  panels[1].series[0].y = {NAN, NAN, NAN};
  EXPECT_NE(testing::input_error([&] {
              write_plots_png((dir / "bad.png").string(), panels);
            }).find("'panel 1' has no finite point"),
            std::string::npos);
  EXPECT_NE(testing::input_error([&] {
              write_plots_png((dir / "bad.png").string(), {});
            }).find("no panel"),
            std::string::npos);
  EXPECT_NE(testing::input_error([&] {
              write_plots_png((dir / "bad.png").string(), {panels[0]}, /*columns=*/0);
            }).find("0 columns"),
            std::string::npos);
  // 60 panels down are 33,600 pixels: more than cairo draws.
  EXPECT_NE(testing::input_error([&] {
              write_plots_png((dir / "bad.png").string(), std::vector<PlotSpec>(60, panels[0]),
                              /*columns=*/1);
            }).find("draw fewer panels"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "bad.png"));
}

TEST(Plot, TextIsDrawnLiterally) {
  PlotSpec plot;
  plot.title = "bad \xff\xfe utf-8 \x1b[31m and #u #[0x2192] escapes";
  plot.x_label = "\xc3";
  plot.x_categories = {"a\xff", "#d"};
  plot.series.push_back({"\xe2\x82", {0, 1}, {1, 2}, {}, {}, false});
  const fs::path dir = fresh_dir("plot-text");
  ::testing::internal::CaptureStderr();  // PLplot gives up on a malformed text with a message
  write_plot_png((dir / "a.png").string(), plot);
  const std::string complaints = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(complaints, "");
  EXPECT_TRUE(is_png(dir / "a.png", 900, 560));
}

TEST(MaskcReport, WritesTheReportOrExitsOne) {
  const fs::path root = write_suite();
  const std::string ok = std::string(MASKC_PATH) + " report " + root.string() + " >/dev/null 2>&1";
  EXPECT_EQ(std::system(ok.c_str()), 0);
  EXPECT_TRUE(fs::exists(root / "REPORT.md"));
  const std::string bad =
      std::string(MASKC_PATH) + " report " + (root / "missing").string() + " >/dev/null 2>&1";
  const int status = std::system(bad.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const std::string metric = std::string(MASKC_PATH) + " report " + root.string() +
                             " --metric wall_seconds >/dev/null 2>&1";
  EXPECT_EQ(std::system(metric.c_str()), 0);
  EXPECT_NE(read_text(root / "REPORT.md").find("`wall_seconds` of the last"), std::string::npos);
}

// REPORT.md names what computed its runs: each distinct commit, build, machine, device and
// precision with its number of runs, and how many runs predate the record; a host name cannot
// break the page.
TEST(Report, NamesTheCommitBuildAndMachineOfItsRuns) {
  const fs::path root = fresh_dir("provenance");
  const json provenance = {{"commit", "0123456789abcdef0123456789abcdef01234567"},
                           {"dirty", false},
                           {"build_type", "Release"},
                           {"torch", "1.13.1"},
                           {"host", "box|\x1b[31m"},
                           {"cpu", "Some CPU"},
                           {"cores", 2}};
  json config = parity2_config("mask");
  config["precision"] = "fp32";
  for (int seed = 0; seed < 2; ++seed) {
    write_run(root / "mask" / fmt::format("seed{}", seed), config,
              {{"accuracy", 1.0}, {"steps", 10}, {"device", "cpu"}, {"provenance", provenance}},
              {{0, 0.5}, {10, 1.0}}, "accuracy");
  }
  write_run(root / "mask" / "seed2", config, {{"accuracy", 1.0}, {"steps", 10}},
            {{0, 0.5}, {10, 1.0}}, "accuracy");
  const std::string text = read_text(write_report({root.string(), kSource, ""}));
  EXPECT_NE(
      text.find("- commit `0123456789ab`, Release build, LibTorch 1.13.1; machine box/\\x1b(31m "
                "(Some CPU, 2 cores); device cpu, precision fp32: 2 runs"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("- 1 run from before summaries recorded the commit and machine"),
            std::string::npos)
      << text;
}

// Summaries written before `data_info` existed hold "data": {} (the data's description, an
// object), not the data file: the settings table names the file config.json gives. And values of
// the wrong type in what the report reads by type leave the run out, named, instead of stopping
// the report.
TEST(Report, OlderAndDamagedValueTypes) {
  const fs::path root = fresh_dir("types");
  write_run(root / "older", data_config("mask"),
            {{"sequence_accuracy", 0.5},
             {"data", json::object()},
             {"train_size", 20},
             {"test_size", 10},
             {"provenance", {{"commit", 5}, {"cores", "two"}}}},
            {{0, 0.5}}, "sequence_accuracy");
  json bad = data_config("vanilla");
  bad["depth"] = "two";
  write_run(root / "damaged", bad, {{"sequence_accuracy", 0.5}}, {{0, 0.5}}, "sequence_accuracy");
  json huge = parity2_config("vanilla");
  huge["n"] = 60;  // a cube no run can have: the report says so where the MDI would be
  write_run(root / "huge", huge, {{"accuracy", 0.5}}, {{0, 0.5}}, "accuracy");
  std::vector<LeftOut> left_out;
  const std::string text = read_text(write_report({root.string(), kSource, ""}, &left_out));
  EXPECT_NE(text.find("MDI not computed: task parity2: n = 60 is outside (2, 24) (the n of "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| train.txt (20 train, 10 test) |"), std::string::npos) << text;
  EXPECT_NE(text.find("commit `unknown`, ? build, LibTorch ?; machine ? (?, ? cores)"),
            std::string::npos)
      << text;
  ASSERT_EQ(left_out.size(), 1u) << text;
  EXPECT_NE(left_out[0].reason.find("config.json: 'depth' is \"two\", not a whole number"),
            std::string::npos)
      << left_out[0].reason;
}

// --per-run: a row per run under the results, by seed in numeric order, with the run's largest
// learned Fourier coefficients, the step it reached 95%, prior mass, wall time and commit.
TEST(Report, PerRunTableListsEachSeed) {
  const fs::path root = fresh_dir("per-run");
  const json fourier = {{"{}", -0.8}, {"{0}", 0.1}, {"{0,1}", 0.9}, {"{1}", 0.3}, {"{2}", 0.05}};
  for (int seed : {10, 2}) {
    json config = parity2_config("mask");
    config["seed"] = seed;
    json summary = {{"accuracy", seed == 2 ? 1.0 : 0.75},
                    {"steps", 300},
                    {"prior_mass_init", 0.6},
                    {"prior_mass", {0.8, 0.9}},
                    {"wall_seconds", 12.4}};
    if (seed == 2) {
      summary["fourier"] = fourier;
      summary["provenance"] = {{"commit", "0123456789abcdef"}};
    }
    write_run(root / "parity2-mask" / fmt::format("seed{}", seed), config, summary,
              {{0, 0.4}, {200, seed == 2 ? 0.96 : 0.7}, {300, seed == 2 ? 1.0 : 0.75}}, "accuracy");
  }
  EXPECT_EQ(read_text(write_report({root.string(), kSource, ""})).find("**Each run**"),
            std::string::npos);
  ReportOptions options{root.string(), kSource, ""};
  options.per_run = true;
  const std::string text = read_text(write_report(options));
  const size_t at = text.find("| parity2-mask | 2 | 100.00 |");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_LT(at, text.find("| parity2-mask | 10 | 75.00 |")) << text;
  EXPECT_NE(text.find("| {0,1} +0.900, ∅ -0.800, {1} +0.300, {0} +0.100 | 200 | 0.6 → 0.85 | 12 "
                      "| 0123456 |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| — | never | 0.6 → 0.85 | 12 | — |"), std::string::npos) << text;
}

}  // namespace
}  // namespace maskprior::report
