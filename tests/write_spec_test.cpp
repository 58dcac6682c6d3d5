// write_spec (compiler/write_spec.h): a pattern back to a readable spec that compiles to it.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/write_spec.h"
#include "core/cells.h"
#include "core/error.h"

namespace maskprior {
namespace {

CompiledMask compile_text(const std::string& text) {
  return compile_source(text, "<test>");
}

SpecDraft draft_of(const CompiledMask& mask) {
  SpecDraft draft;
  draft.name = mask.name;
  draft.layout = mask.layout;
  draft.layers = mask.layers;
  draft.heads = mask.heads;
  draft.pattern = open_pattern(mask);
  draft.hard = mask.hard;
  draft.open_value = mask.open_value;
  draft.close_value = mask.close_value;
  return draft;
}

/// The written spec's pattern, off the hard cells, and its hard mask equal the draft's.
void expect_round_trip(const SpecDraft& draft, const std::string& text, const std::string& what) {
  const CompiledMask back = compile_text(text);
  ASSERT_EQ(back.layers, draft.layers) << what;
  ASSERT_EQ(back.heads, draft.heads) << what;
  ASSERT_EQ(back.hard.has_value(), draft.hard.has_value()) << what;
  if (draft.hard) {
    EXPECT_EQ(*back.hard, *draft.hard) << what;
  }
  const std::vector<uint8_t> pattern = open_pattern(back);
  const size_t plane = static_cast<size_t>(back.n * back.n);
  int64_t differ = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (draft.hard && (*draft.hard)[i % plane] != 0) continue;
    differ += (pattern[i] != 0) != (draft.pattern[i] != 0);
  }
  EXPECT_EQ(differ, 0) << what << "\n" << text;
}

TEST(WriteSpec, EverySpecInTheRepositoryComesBackCellForCell) {
  int specs = 0;
  for (const char* folder : {"specs", "tests/data/pass", "examples"}) {
    const std::filesystem::path root = std::filesystem::path(MASKPRIOR_SOURCE_DIR) / folder;
    if (!std::filesystem::exists(root)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (entry.path().extension() != ".mask") continue;
      const CompiledMask mask = compile_file(entry.path().string());
      const SpecDraft draft = draft_of(mask);
      expect_round_trip(draft, write_spec(draft), entry.path().string());
      ++specs;
    }
  }
  EXPECT_GE(specs, 20);
}

TEST(WriteSpec, WritesTheLanguagesShapesWhereTheyFit) {
  const std::string addition = write_spec(
      draft_of(compile_file(std::string(MASKPRIOR_SOURCE_DIR) + "/specs/arith/addition.mask")));
  EXPECT_NE(addition.find("hard causal"), std::string::npos) << addition;
  EXPECT_NE(addition.find("open diagonal"), std::string::npos) << addition;
  EXPECT_NE(addition.find("-> before c carry"), std::string::npos) << addition;
  EXPECT_NE(addition.find("digits a msb_first"), std::string::npos) << addition;

  const std::string local = write_spec(
      draft_of(compile_file(std::string(MASKPRIOR_SOURCE_DIR) + "/specs/vision/local7x7.mask")));
  // Its heads' neighbour shifts lie inside the weak 3x3 locality, so every head has one pattern.
  EXPECT_NE(local.find("open local p radius 1 metric chebyshev"), std::string::npos) << local;
  EXPECT_EQ(local.find("head 0"), std::string::npos) << local;
  EXPECT_NE(local.find("open cls -> p"), std::string::npos) << local;

  const std::string shifts = write_spec(draft_of(
      compile_text("mask s tokens cls, p[16] grid p 4 x 4 heads 2 default close open cls -> p "
                   "head 0 { open shift p by (0, 1) } head 1 { open shift p by (-1, 0) }")));
  EXPECT_NE(shifts.find("head 1 {\n  open shift p by (-1, 0)\n}"), std::string::npos) << shifts;
  EXPECT_EQ(shifts.find("layer"), std::string::npos) << shifts;
}

TEST(WriteSpec, SmallPatternAsExpectedText) {
  // x[0..4] attends to its own token and the one before; y attends to all of x.
  const CompiledMask mask = compile_text(
      "mask small tokens x[4], y default close open diagonal "
      "for i in 1..4 { open x[i] -> x[i - 1] } open y -> x");
  const std::string text = write_spec(draft_of(mask));
  EXPECT_EQ(text,
            "mask small\n\n"
            "tokens x[4], y\n"
            "scale open = 10, close = -10\n\n"
            "default close\n"
            "open diagonal\n"
            "open y -> x\n"
            "for i in 1..4 { open x[i] -> x[i - 1] }\n");
}

// Planes open everywhere the hard mask allows (a distilled union of spread attention) are written
// as `default open`, not as rules that happen to reach every cell (a cycle window as wide as its
// span, `before x -> before x`, ...).
TEST(WriteSpec, FullyOpenPlanesAreDefaultOpen) {
  for (const std::string& layout :
       {std::string("tokens cls, x[15] heads 2 default open"),
        std::string("tokens a[3], eq, c[4] default open hard causal")}) {
    const CompiledMask mask = compile_text("mask all " + layout);
    const std::string text = write_spec(draft_of(mask));
    EXPECT_NE(text.find("\ndefault open\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("\nopen "), std::string::npos) << text;  // no rule after it
    expect_round_trip(draft_of(mask), text, layout);
  }
  // One closed cell: rules again, and a cycle window short of the whole span is written as one.
  const std::string band = write_spec(
      draft_of(compile_text("mask band tokens x[15] default close open cycle x window 7")));
  EXPECT_NE(band.find("\ndefault close\nopen cycle x window 7\n"), std::string::npos) << band;
}

TEST(WriteSpec, RandomPatternsOnEveryKindOfLayout) {
  const std::vector<std::string> layouts = {
      "tokens a[3], plus, b[3], eq, c[4] digits a msb_first digits b msb_first digits c "
      "lsb_first default close hard causal",
      "tokens cls, p[16] grid p 4 x 4 layers 2 heads 3 default close",
      "tokens x[7], y[2] heads 2 default close hard x -> y",
  };
  std::mt19937 rng(7);
  for (const std::string& layout : layouts) {
    const CompiledMask base = compile_text("mask r " + layout);
    for (int trial = 0; trial < 5; ++trial) {
      SpecDraft draft = draft_of(base);
      std::bernoulli_distribution open(0.1 + 0.2 * trial);
      for (uint8_t& cell : draft.pattern) cell = open(rng) ? 1 : 0;
      expect_round_trip(draft, write_spec(draft), layout);
    }
  }
}

TEST(WriteSpec, PerHeadPatternsGoInBlocks) {
  const CompiledMask mask = compile_text(
      "mask h tokens x[5] layers 2 heads 2 default close open diagonal "
      "layer 1 { head 0 { open x -> x[0] } }");
  const std::string text = write_spec(draft_of(mask));
  EXPECT_NE(text.find("\nopen diagonal\nlayer 1 {"), std::string::npos) << text;  // shared first
  EXPECT_NE(text.find("  head 0 {"), std::string::npos) << text;
  expect_round_trip(draft_of(mask), text, "per head");
}

TEST(WriteSpec, ALayoutTheLanguageCannotSpellIsAnInputError) {
  SpecDraft draft;
  draft.layout = make_layout({{"open", 2}});  // a reserved word
  draft.pattern.assign(4, 0);
  EXPECT_THROW(write_spec(draft), InputError);
}

}  // namespace
}  // namespace maskprior

// distilled_origin: distill's options and the source run's task and init, without the folder
// and seed; nothing for a spec without distill's header.
TEST(WriteSpec, DistilledOriginDropsFolderAndSeed) {
  const std::string spec =
      "# distilled by `maskc distill runs/s/parity2-all-vanilla/seed2 --from attention --mass 0.9 "
      "--rows 256 --per model`\n# run: task parity2, init vanilla, seed 2, spec runs/x/spec.mask\n"
      "mask parity2\n";
  EXPECT_EQ(maskprior::distilled_origin(spec),
            "--from attention --mass 0.9 --rows 256 --per model; task parity2, init vanilla");
  EXPECT_EQ(maskprior::distilled_origin(
                "# distilled by `maskc distill d --from mask --per head`\nmask m\n"),
            "--from mask --per head");
  EXPECT_EQ(maskprior::distilled_origin("mask parity2\n"), std::nullopt);
  EXPECT_EQ(maskprior::distilled_origin("# distilled by `maskc distill d`\n"), std::nullopt);
}
