// `maskc sweep`'s grid (experiments/sweep.h) and the settings `maskc report` pools by
// (report/report.h): parsing --grid against the config table, combinations and their folder names,
// and that the report's execution keys are the config table's resumable rows.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "experiments/sweep.h"
#include "report/report.h"
#include "tests/test_util.h"
#include "train/config.h"

namespace maskprior::training {
namespace {

using nlohmann::json;
const std::string kParity2 = std::string(MASKPRIOR_SOURCE_DIR) + "/specs/gotu/parity2.mask";

// What only changes how a run is computed is one list (runfolder/run_files.h): the report's, and
// the rows --resume may change, each a row of the config table.
TEST(SweepTest, ReportExecutionKeysAreTheResumableRows) {
  EXPECT_EQ(runfolder::execution_keys(), resumable_keys());
  EXPECT_EQ(resumable_keys().size(), 6u);
}

TEST(SweepTest, AxesAreTypedByTheirRow) {
  const SweepAxis init = parse_axis("init=vanilla,mask");
  EXPECT_EQ(init.key, "init");
  EXPECT_EQ(init.values, (std::vector<json>{"vanilla", "mask"}));
  const SweepAxis lr = parse_axis("lr=1e-3,0.01");
  EXPECT_EQ(lr.values, (std::vector<json>{0.001, 0.01}));
  EXPECT_TRUE(lr.values[0].is_number_float());
  EXPECT_TRUE(parse_axis("epochs=1,2").values[1].is_number_integer());
  EXPECT_TRUE(parse_axis("mask_open=none,3").values[0].is_null());
}

TEST(SweepTest, BadAxesNameTheKeyAndWhatItTakes) {
  auto error = [](const std::string& text) {
    return testing::input_error([&] { parse_axis(text); });
  };
  const std::string unknown = error("nope=1,2");
  EXPECT_NE(unknown.find("unknown key 'nope'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("init"), std::string::npos) << unknown;  // the keys it takes
  const std::string init = error("init=vanilla,maskk");
  EXPECT_NE(init.find("--grid init: 'maskk' is not one of vanilla"), std::string::npos) << init;
  EXPECT_NE(error("lr=fast").find("--grid lr: 'fast' is not a finite number"), std::string::npos);
  EXPECT_NE(error("epochs=1.5").find("not a whole number"), std::string::npos);
  EXPECT_NE(error("seed=1,2").find("--seeds"), std::string::npos);
  EXPECT_NE(error("threads=1,2").find("execution setting"), std::string::npos);
  EXPECT_NE(error("defines=1").find("cannot be swept"), std::string::npos);
  EXPECT_NE(error("lr=1,1").find("given twice"), std::string::npos);
  EXPECT_NE(error("lr").find("KEY=V1,V2"), std::string::npos);
}

SweepOptions parity2_sweep() {
  SweepOptions options;
  options.base = {{"task", "parity2"}, {"spec", kParity2}, {"n", 6}};
  options.out = "runs/s";
  return options;
}

TEST(SweepTest, CombinationsAreNamedBySettingsFirstAxisSlowest) {
  SweepOptions options = parity2_sweep();
  options.grid = {parse_axis("init=vanilla,mask"), parse_axis("lr=0.001,0.01")};
  const std::vector<SweepPoint> points = sweep_points(options);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].name, "init=vanilla,lr=0.001");
  EXPECT_EQ(points[1].name, "init=vanilla,lr=0.01");
  EXPECT_EQ(points[3].name, "init=mask,lr=0.01");
  EXPECT_EQ(points[3].settings, (json{{"init", "mask"}, {"lr", 0.01}}));
}

TEST(SweepTest, PathsReadByFileNameAndStayDistinct) {
  SweepOptions options = parity2_sweep();
  options.grid = {SweepAxis{"spec", {kParity2, "other/parity2.mask", "my spec.mask"}}};
  const std::vector<SweepPoint> points = sweep_points(options);
  ASSERT_EQ(points.size(), 3u);
  // Two specs named parity2.mask: each gets a short hash of its path.
  EXPECT_TRUE(points[0].name.starts_with("spec=parity2.mask-")) << points[0].name;
  EXPECT_NE(points[0].name, points[1].name);
  EXPECT_TRUE(points[2].name.starts_with("spec=my_spec.mask-")) << points[2].name;
}

TEST(SweepTest, EveryCombinationIsCheckedBeforeAnyRun) {
  SweepOptions options = parity2_sweep();
  options.base.erase("spec");
  options.grid = {parse_axis("init=vanilla,mask")};  // mask needs a spec
  const std::string error = testing::input_error([&] { sweep_points(options); });
  EXPECT_NE(error.find("--grid combination init=mask: --init mask needs a spec"), std::string::npos)
      << error;
  options.grid = {parse_axis("lr=0.1,-1")};
  EXPECT_NE(testing::input_error([&] { sweep_points(options); }).find("lr must be positive"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists("runs/s"));
}

}  // namespace
}  // namespace maskprior::training
