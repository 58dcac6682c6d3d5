// Tests of the .mask compiler: literal matrices for every rule, properties at larger N,
// diagnostics (corpus tests/data/fail), warnings, the size cap, -D, and the shipped specs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ast.h"
#include "compiler/compile.h"
#include "core/error.h"
#include "tests/test_util.h"

namespace maskprior {
namespace {

using testing::input_error;
using testing::spec_error;

CompiledMask compile(const std::string& body, const CompileOptions& options = {}) {
  return compile_source("mask t\n" + body, "t.mask", options);
}

// One char per cell: '1' open, '0' close, '?' any other value.
std::vector<std::string> pattern(const CompiledMask& m, int64_t layer = 0, int64_t head = 0) {
  std::vector<std::string> rows;
  for (int64_t q = 0; q < m.n; ++q) {
    std::string row;
    for (int64_t k = 0; k < m.n; ++k) {
      const double v = m.at(layer, head, q, k);
      row += v == m.open_value ? '1' : v == m.close_value ? '0' : '?';
    }
    rows.push_back(row);
  }
  return rows;
}

std::vector<std::string> hard_pattern(const CompiledMask& m) {
  std::vector<std::string> rows;
  for (int64_t q = 0; q < m.n; ++q) {
    std::string row;
    for (int64_t k = 0; k < m.n; ++k) row += m.is_hard(q, k) ? 'x' : '.';
    rows.push_back(row);
  }
  return rows;
}

using Rows = std::vector<std::string>;

// Expects SpecError at line:col with `message` in its text.
void expect_spec_error(const std::string& body, int line, int column, const std::string& message) {
  try {
    compile(body);
    ADD_FAILURE() << "expected an error: " << message;
  } catch (const SpecError& e) {
    EXPECT_EQ(e.diagnostic().where.line, line) << e.what();
    EXPECT_EQ(e.diagnostic().where.column, column) << e.what();
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool has_warning(const CompiledMask& m, const std::string& text, int line = 0) {
  for (const Diagnostic& d : m.warnings) {
    if (d.severity == Severity::kWarning && d.message.find(text) != std::string::npos &&
        (line == 0 || d.where.line == line)) {
      return true;
    }
  }
  return false;
}

// ----------------------------------------------------------------------------------------------
// Literal matrices, one per rule shape

TEST(CompilerRules, LanguageExampleParity2) {
  const CompiledMask m = compile(R"(param n = 3
tokens cls, x[n]
scale open = 10, close = -10
default close
open diagonal
open cls -> x[0], x[1]
open pair x[0], x[1]
)");
  EXPECT_EQ(m.name, "t");
  EXPECT_EQ(m.n, 4);
  EXPECT_EQ(pattern(m), (Rows{"1110", "0110", "0110", "0001"}));
  EXPECT_FALSE(m.hard.has_value());
  EXPECT_EQ(m.layout.spans.size(), 2u);
  EXPECT_EQ(m.layout.spans[1].offset, 1);
  EXPECT_EQ(m.layout.spans[1].length, 3);
  EXPECT_DOUBLE_EQ(m.params.at("n"), 3.0);
}

TEST(CompilerRules, Directed) {
  const CompiledMask m = compile("tokens cls, x[3]\nopen cls -> x[0], x[2]\n");
  EXPECT_EQ(pattern(m), (Rows{"0101", "0000", "0000", "0000"}));
}

TEST(CompilerRules, PairWithParenthesisedList) {
  const CompiledMask m = compile("tokens x[4]\nopen pair x[0], (x[2], x[3])\n");
  EXPECT_EQ(pattern(m), (Rows{"0011", "0000", "1000", "1000"}));
}

TEST(CompilerRules, Clique) {
  const CompiledMask m = compile("tokens x[4]\nopen clique x[1..3]\n");
  EXPECT_EQ(pattern(m), (Rows{"0000", "0110", "0110", "0000"}));
}

TEST(CompilerRules, DiagonalAllAndSelected) {
  EXPECT_EQ(pattern(compile("tokens x[3]\nopen diagonal\n")), (Rows{"100", "010", "001"}));
  EXPECT_EQ(pattern(compile("tokens x[4]\nopen diagonal x[1..3]\n")),
            (Rows{"0000", "0100", "0010", "0000"}));
}

TEST(CompilerRules, CycleWrapsAround) {
  const CompiledMask m = compile("tokens x[5]\nopen cycle x window 2\n");
  EXPECT_EQ(pattern(m), (Rows{"11001", "11100", "01110", "00111", "10011"}));
}

TEST(CompilerRules, AlignUnequalLengthsMixedDigitOrder) {
  // a lsb: place i = a[i]; b msb: place 0 = b[2]; c lsb. c[2] has no a place 2.
  const std::string spec = R"(tokens a[2], b[3], c[3]
digits a lsb_first
digits b msb_first
digits c lsb_first
)";
  EXPECT_EQ(pattern(compile(spec + "open align a, b -> c\n")),
            (Rows{"00000000", "00000000", "00000000", "00000000", "00000000", "10001000",
                  "01010000", "00100000"}));
  EXPECT_EQ(pattern(compile(spec + "open align a, b -> c carry\n")),
            (Rows{"00000000", "00000000", "00000000", "00000000", "00000000", "10001000",
                  "11011000", "11111000"}));
}

TEST(CompilerRules, AlignBeforeResult) {
  const CompiledMask m = compile(R"(tokens a[2], b[2], eq, c[2]
digits a lsb_first
digits b lsb_first
digits c lsb_first
open align a, b -> before c
)");
  EXPECT_EQ(pattern(m),
            (Rows{"0000000", "0000000", "0000000", "0000000", "1010000", "0101000", "0000000"}));
}

TEST(CompilerRules, AlignMsbFirstResultKeepsPlaceOrder) {
  // c msb_first: c[1] is place 0, c[0] is place 1; `before c` keeps that order.
  const CompiledMask m = compile(R"(tokens a[2], eq, c[2]
digits a lsb_first
digits c msb_first
open align a, a -> before c
)");
  // place 0 (c[1], predicted by row c[0] = 3) -> a[0]; place 1 (c[0], predicted by eq = 2) -> a[1]
  EXPECT_EQ(pattern(m), (Rows{"00000", "00000", "01000", "10000", "00000"}));
}

// Two 2-digit operands and a 3-digit result, all stored units first (tokens 0-1, 2-3, 4-6).
const std::string kDigitsLsb = R"(tokens a[2], b[2], c[3]
digits a lsb_first
digits b lsb_first
digits c lsb_first
)";

TEST(CompilerRules, Product) {
  const std::string& spec = kDigitsLsb;
  EXPECT_EQ(pattern(compile(spec + "open product a, b -> c\n")),
            (Rows{"0000000", "0000000", "0000000", "0000000", "1010000", "1111000", "0101000"}));
  EXPECT_EQ(pattern(compile(spec + "open product a, b -> c carry\n")),
            (Rows{"0000000", "0000000", "0000000", "0000000", "1010000", "1111000", "1111000"}));
}

TEST(CompilerRules, LagMovesTheOperandPlacesDownTheResult) {
  // `lag h`: the row of c[p] gets what c[p - h] gets without it; c[0..h-1] get nothing.
  const std::string& spec = kDigitsLsb;
  EXPECT_EQ(pattern(compile(spec + "open product a, b -> c lag 0\n")),
            pattern(compile(spec + "open product a, b -> c\n")));
  EXPECT_EQ(pattern(compile(spec + "open product a, b -> c lag 1\n")),
            (Rows{"0000000", "0000000", "0000000", "0000000", "0000000", "1010000", "1111000"}));
  // carry with a lag: places i + k <= p - h; the options come in either order
  const Rows lag_carry{"0000000", "0000000", "0000000", "0000000", "0000000", "0000000", "1010000"};
  EXPECT_EQ(pattern(compile(spec + "open product a, b -> c lag 2 carry\n")), lag_carry);
  EXPECT_EQ(pattern(compile(spec + "open product a, b -> c carry lag 2\n")), lag_carry);
  EXPECT_EQ(pattern(compile(spec + "open align a, b -> c lag 1\n")),
            (Rows{"0000000", "0000000", "0000000", "0000000", "0000000", "1010000", "0101000"}));
  EXPECT_EQ(pattern(compile(spec + "open align a, b -> c carry lag 1\n")),
            (Rows{"0000000", "0000000", "0000000", "0000000", "0000000", "1010000", "1111000"}));
  // `lag` is not reserved: a parameter of that name is the lag's value
  EXPECT_EQ(pattern(compile("param lag = 1\n" + spec + "open product a, b -> c lag lag\n")),
            pattern(compile(spec + "open product a, b -> c lag 1\n")));
}

TEST(CompilerRules, LagFollowsTheDigitOrder) {
  // The lag counts places, not tokens: with c stored msb first, `lag 1` moves the units
  // products from c[2] (place 0) to c[1] (place 1).
  const std::string spec = R"(tokens a[2], b[2], c[3]
digits a lsb_first
digits b lsb_first
digits c msb_first
open product a, b -> c lag 1
)";
  EXPECT_EQ(pattern(compile(spec)),
            (Rows{"0000000", "0000000", "0000000", "0000000", "1111000", "1010000", "0000000"}));
}

TEST(CompilerRules, LocalMetricsAndDilation) {
  const std::string grid = "tokens p[9]\ngrid p 3 x 3\n";
  const Rows chebyshev = pattern(compile(grid + "open local p radius 1\n"));
  EXPECT_EQ(chebyshev[0], "110110000");
  EXPECT_EQ(chebyshev[4], "111111111");
  EXPECT_EQ(chebyshev[8], "000011011");
  const Rows manhattan = pattern(compile(grid + "open local p radius 1 metric manhattan\n"));
  EXPECT_EQ(manhattan[0], "110100000");
  EXPECT_EQ(manhattan[4], "010111010");
  // modifiers in any order
  const Rows dilated = pattern(compile(grid + "open local p dilation 2 radius 2\n"));
  EXPECT_EQ(dilated[0], "101000101");
  EXPECT_EQ(dilated[4], "000010000");
  const Rows both = pattern(compile(grid + "open local p metric manhattan dilation 2 radius 2\n"));
  EXPECT_EQ(both[0], "101000100");
}

TEST(CompilerRules, ShiftSkipsCellsOffTheGrid) {
  const CompiledMask m = compile("tokens p[9]\ngrid p 3 x 3\nopen shift p by (1, -1)\n");
  EXPECT_EQ(pattern(m), (Rows{"000000000", "000100000", "000010000", "000000000", "000000100",
                              "000000010", "000000000", "000000000", "000000000"}));
}

TEST(CompilerRules, DistanceValuesUseQueryMinusKey) {
  const CompiledMask m = compile("tokens cls, x[3]\nset distance x = d\n");
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(m.at(0, 0, 1 + i, 1 + j), static_cast<float>(i - j));
  }
  EXPECT_EQ(m.at(0, 0, 0, 0), -10.0f);
  const CompiledMask f =
      compile("tokens x[4]\nset distance x = -0.5 * abs(d) + max(1, 2) - min(1, 2)\n");
  EXPECT_FLOAT_EQ(f.at(0, 0, 3, 0), -0.5f * 3 + 1);
  EXPECT_FLOAT_EQ(f.at(0, 0, 0, 3), -0.5f * 3 + 1);
}

TEST(CompilerRules, ExplicitValuesDefaultAndCloseRules) {
  const CompiledMask m = compile(R"(tokens x[3]
default 0.5
open x[0] -> x[1] at 2.5
set x[1] -> x[0] = -3
close x[2] -> x[2]
open x[2] -> x[0]
)");
  EXPECT_EQ(m.at(0, 0, 0, 1), 2.5f);
  EXPECT_EQ(m.at(0, 0, 1, 0), -3.0f);
  EXPECT_EQ(m.at(0, 0, 2, 2), -10.0f);
  EXPECT_EQ(m.at(0, 0, 2, 0), 10.0f);
  EXPECT_EQ(m.at(0, 0, 0, 0), 0.5f);
  EXPECT_EQ(m.at(0, 0, 1, 2), 0.5f);
}

TEST(CompilerRules, HardRules) {
  const CompiledMask all = compile("tokens x[3]\nopen diagonal\nhard causal\n");
  ASSERT_TRUE(all.hard.has_value());
  EXPECT_EQ(hard_pattern(all), (Rows{".xx", "..x", "..."}));
  // hard never changes M
  EXPECT_EQ(pattern(all), (Rows{"100", "010", "001"}));
  const CompiledMask sub = compile("tokens x[4]\nopen diagonal\nhard causal x[1..3]\n");
  EXPECT_EQ(hard_pattern(sub), (Rows{"....", "..x.", "....", "...."}));
  const CompiledMask directed = compile("tokens x[3], y\nopen diagonal\nhard y -> x[1..]\n");
  EXPECT_EQ(hard_pattern(directed), (Rows{"....", "....", "....", ".xx."}));
}

TEST(CompilerRules, CascadeAndProvenance) {
  const CompiledMask m = compile(R"(tokens x[3]
default close
open x -> x
close x[0] -> x[1..]
open x[0] -> x[2]
)");
  // lines: 1 mask, 2 tokens, 3 default, 4 open, 5 close, 6 open
  EXPECT_EQ(pattern(m), (Rows{"101", "111", "111"}));
  EXPECT_EQ(m.provenance[m.index(0, 0, 0, 0)], 4);
  EXPECT_EQ(m.provenance[m.index(0, 0, 0, 1)], 5);
  EXPECT_EQ(m.provenance[m.index(0, 0, 0, 2)], 6);
  EXPECT_EQ(m.provenance[m.index(0, 0, 1, 0)], 4);
  const CompiledMask untouched = compile("tokens x[2]\nopen x[0] -> x[0]\n");
  EXPECT_EQ(untouched.provenance[untouched.index(0, 0, 1, 1)], 0);
}

TEST(CompilerRules, NegativeIndexesAndOpenRanges) {
  EXPECT_EQ(pattern(compile("tokens x[4]\nopen x[-1] -> x[-2]\n"))[3], "0010");
  EXPECT_EQ(pattern(compile("tokens x[4]\nopen x[0] -> x[..-1]\n"))[0], "1110");
  EXPECT_EQ(pattern(compile("tokens x[4]\nopen x[0] -> x[2..]\n"))[0], "0011");
  EXPECT_EQ(pattern(compile("tokens x[4]\nopen x[0] -> x[..]\n"))[0], "1111");
  // a computed negative index is an error, never a wrap-around
  expect_spec_error("tokens x[4]\nfor i in 0..2 {\n  open x[i - 1] -> x\n}\n", 4, 10,
                    "index x[-1] is outside span x of length 4");
}

TEST(CompilerBlocks, HeadsLayersAndLoops) {
  const CompiledMask m = compile(R"(tokens x[3]
layers 2
heads 3
for i in 0..3 {
  open x[i] -> x[0..i + 1]
}
layer 1 {
  heads 1..3 {
    close x -> x
    head 2 { open diagonal }
  }
}
)");
  EXPECT_EQ(m.layers, 2);
  EXPECT_EQ(m.heads, 3);
  const Rows triangle{"100", "110", "111"};
  EXPECT_EQ(pattern(m, 0, 0), triangle);
  EXPECT_EQ(pattern(m, 0, 1), triangle);
  EXPECT_EQ(pattern(m, 0, 2), triangle);
  EXPECT_EQ(pattern(m, 1, 0), triangle);
  EXPECT_EQ(pattern(m, 1, 1), (Rows{"000", "000", "000"}));
  EXPECT_EQ(pattern(m, 1, 2), (Rows{"100", "010", "001"}));
  // lines: 6 the loop's rule, 10 `close x -> x`, 11 `head 2 { open diagonal }`
  EXPECT_EQ(m.provenance[m.index(1, 2, 0, 0)], 11);
  EXPECT_EQ(m.provenance[m.index(1, 1, 0, 0)], 10);
  EXPECT_EQ(m.provenance[m.index(0, 1, 0, 0)], 6);
}

TEST(CompilerBlocks, NestedLoopsWithExpressions) {
  const CompiledMask m = compile(R"(param n = 4
tokens x[n]
for i in 1..n {
  for j in 0..i { set x[i] -> x[j] = (i - j) * 2 % 3 }
}
)");
  for (int64_t i = 1; i < 4; ++i) {
    for (int64_t j = 0; j < i; ++j)
      EXPECT_EQ(m.at(0, 0, i, j), static_cast<float>((i - j) * 2 % 3));
  }
}

TEST(CompilerOptions, ScaleAndOpenCloseOverrides) {
  const std::string spec = R"(tokens x[2]
scale open = 3, close = -2
default open
close x[0] -> x[1]
open x[1] -> x[0] at 1
)";
  const CompiledMask plain = compile(spec);
  EXPECT_EQ(plain.at(0, 0, 0, 0), 3.0f);
  EXPECT_EQ(plain.at(0, 0, 0, 1), -2.0f);
  CompileOptions options;
  options.open_value = 7.0;
  options.close_value = -6.0;
  const CompiledMask over = compile(spec, options);
  EXPECT_EQ(over.open_value, 7.0);
  EXPECT_EQ(over.close_value, -6.0);
  EXPECT_EQ(over.at(0, 0, 0, 0), 7.0f);  // default open follows --open
  EXPECT_EQ(over.at(0, 0, 0, 1), -6.0f);
  EXPECT_EQ(over.at(0, 0, 1, 0), 1.0f);  // explicit values are untouched
}

TEST(CompilerOptions, DefinesOverrideParameters) {
  const std::string spec = "param n = 15\nparam m = n + 1\ntokens cls, x[n]\n";
  CompileOptions options;
  options.defines["n"] = "20";
  const CompiledMask m = compile(spec, options);
  EXPECT_EQ(m.n, 21);
  EXPECT_DOUBLE_EQ(m.params.at("n"), 20.0);
  EXPECT_DOUBLE_EQ(m.params.at("m"), 21.0);
  options.defines["n"] = "2 * 3";
  EXPECT_EQ(compile(spec, options).n, 7);
  options.defines["n"] = "4.5";
  EXPECT_THROW(compile(spec, options), SpecError);  // a length must be an integer
  options.defines["n"] = "abc(";
  EXPECT_THROW(compile(spec, options), InputError);
  CompileOptions unknown;
  unknown.defines["k"] = "3";
  try {
    compile(spec, unknown);
    ADD_FAILURE() << "unknown -D accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no parameter k"), std::string::npos) << e.what();
  }
}

TEST(CompilerOutput, MetadataAndSha256) {
  const CompiledMask m = compile_source("mask t\ntokens x\n", "t.mask");
  EXPECT_EQ(m.source_sha256, "efb7c4a1e112565f13831ca704f5a3e88b79ef0323fc29aab9d74755317385b7");
  EXPECT_EQ(m.n, 1);
  EXPECT_EQ(m.mask.size(), 1u);
  EXPECT_EQ(m.mask[0], -10.0f);  // default close
}

TEST(CompilerOutput, GridAndDigitsInLayout) {
  const CompiledMask m = compile("tokens c[2], p[6]\ndigits c msb_first\ngrid p 2 x 3\n");
  ASSERT_TRUE(m.layout.spans[1].grid.has_value());
  EXPECT_EQ(m.layout.spans[1].grid->first, 2);
  EXPECT_EQ(m.layout.spans[1].grid->second, 3);
  ASSERT_TRUE(m.layout.spans[0].digits.has_value());
  EXPECT_EQ(*m.layout.spans[0].digits, DigitOrder::kMsbFirst);
}

TEST(CompilerOutput, SizeCapIsCheckedBeforeAllocating) {
  CompileOptions options;
  options.max_bytes = 1000;
  try {
    compile("tokens x[12]\nlayers 2\n", options);  // 2 * 144 * 8 = 2304 bytes
    ADD_FAILURE() << "size cap not enforced";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("above the limit of 1000 B"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("KiB"), std::string::npos) << e.what();
  }
  options.max_bytes = 2304;
  EXPECT_NO_THROW(compile("tokens x[12]\nlayers 2\n", options));
  // Overflowing sizes saturate instead of wrapping around to a small number.
  EXPECT_THROW(compile("tokens x[4000000000], y[4000000000]\nlayers 1000000\n"), SpecError);
}

// What training compiles: the same M and hard mask without the provenance, and a size cap that
// counts the mask's 4 bytes a cell only.
TEST(CompilerOutput, WithoutProvenanceTheSameMaskAndHalfTheBytes) {
  const std::string spec =
      "tokens cls, x[5]\nlayers 2\nheads 2\ndefault close\nopen diagonal\n"
      "open cls -> x[0], x[1]\nlayer 1 { head 0 { open x -> x } }\nhard x[4] -> cls\n";
  CompileOptions without;
  without.provenance = false;
  const CompiledMask full = compile(spec);
  const CompiledMask lean = compile(spec, without);
  EXPECT_EQ(lean.mask, full.mask);
  EXPECT_EQ(lean.hard, full.hard);
  EXPECT_TRUE(lean.provenance.empty());
  EXPECT_EQ(full.provenance.size(), full.mask.size());
  EXPECT_NO_THROW(check_invariants(lean));
  EXPECT_EQ(lean.warnings.size(), full.warnings.size());

  without.max_bytes = 2 * 144 * 4;  // fits the mask alone, not mask + provenance
  EXPECT_NO_THROW(compile("tokens x[12]\nlayers 2\n", without));
  CompileOptions with = without;
  with.provenance = true;
  try {
    compile("tokens x[12]\nlayers 2\n", with);
    ADD_FAILURE() << "mask + provenance should not fit";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("int32 provenance"), std::string::npos) << e.what();
  }
  without.max_bytes -= 1;
  try {
    compile("tokens x[12]\nlayers 2\n", without);
    ADD_FAILURE() << "the mask alone should not fit";
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()).find("provenance"), std::string::npos) << e.what();
  }
}

// ----------------------------------------------------------------------------------------------
// Warnings

TEST(CompilerWarnings, UniformlyClosedRows) {
  const CompiledMask m = compile("tokens x[3]\nopen x[0] -> x\n");
  EXPECT_TRUE(has_warning(m, "rows x[1], x[2] are uniformly closed")) << m.warnings.size();
  const CompiledMask fine = compile("tokens x[3]\nopen diagonal\n");
  EXPECT_TRUE(fine.warnings.empty());
  const CompiledMask per_head =
      compile("tokens x[2]\nheads 2\nopen diagonal\nhead 1 { close x[1] -> x }\n");
  EXPECT_TRUE(has_warning(per_head, "row x[1] is uniformly closed in layer 0 head 1"));
  // a neutral (zero) mask is not closed
  EXPECT_TRUE(compile("tokens x[3]\ndefault 0\n").warnings.empty());
}

TEST(CompilerWarnings, RowsExcludedByHard) {
  const CompiledMask m = compile("tokens x[3]\nopen diagonal\nhard x[0] -> x\n");
  EXPECT_TRUE(has_warning(m, "row x[0] has every key excluded by `hard` rules", 4));
  // hard-excluded cells do not count when judging a row closed
  const CompiledMask causal =
      compile("tokens x[2]\nopen x[1] -> x[1]\nopen x[0] -> x[1]\nhard causal\n");
  EXPECT_TRUE(has_warning(causal, "row x[0] is uniformly closed"));
}

TEST(CompilerWarnings, RulesThatWriteNoCell) {
  const CompiledMask m = compile(R"(tokens x[3], p[4]
grid p 2 x 2
open diagonal
open x[0..0] -> x
open shift p by (5, 0)
for i in 0..0 { open x[i] -> x }
for i in 0..3 { open x[i] -> x[i + 1..] }
)");
  EXPECT_TRUE(has_warning(m, "this rule writes no cell", 5));
  EXPECT_TRUE(has_warning(m, "this rule writes no cell", 6));
  EXPECT_TRUE(has_warning(m, "this rule writes no cell", 7));
  EXPECT_FALSE(has_warning(m, "this rule writes no cell", 8));  // writes in some iterations
  EXPECT_FALSE(has_warning(m, "this rule writes no cell", 4));
}

// ----------------------------------------------------------------------------------------------
// Properties at larger N

TEST(CompilerProperties, CycleIsSymmetricAndWraps) {
  const int64_t n = 300;
  const int64_t k = 5;
  const CompiledMask m = compile("tokens x[300]\nopen cycle x window 5\n");
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t gap = std::min((i - j + n) % n, (j - i + n) % n);
      ASSERT_EQ(m.at(0, 0, i, j) == 10.0f, gap < k) << i << "," << j;
    }
  }
}

TEST(CompilerProperties, LocalMatchesBruteForce) {
  const int64_t h = 24;
  const int64_t w = 20;
  struct Case {
    const char* options;
    int64_t radius, dilation;
    bool manhattan;
  };
  for (const Case& c :
       {Case{"radius 2", 2, 1, false}, Case{"radius 3 metric manhattan", 3, 1, true},
        Case{"dilation 2 radius 5", 5, 2, false},
        Case{"metric manhattan radius 4 dilation 3", 4, 3, true}}) {
    const CompiledMask m = compile(
        std::string("tokens cls, p[480]\ngrid p 24 x 20\nopen local p ") + c.options + "\n");
    for (int64_t a = 0; a < h * w; ++a) {
      for (int64_t b = 0; b < h * w; ++b) {
        const int64_t dy = b / w - a / w;
        const int64_t dx = b % w - a % w;
        const int64_t dist =
            c.manhattan ? std::abs(dy) + std::abs(dx) : std::max(std::abs(dy), std::abs(dx));
        const bool open = dist <= c.radius && dy % c.dilation == 0 && dx % c.dilation == 0;
        ASSERT_EQ(m.at(0, 0, 1 + a, 1 + b) == 10.0f, open) << c.options << " " << a << "," << b;
        ASSERT_EQ(m.at(0, 0, 1 + a, 1 + b), m.at(0, 0, 1 + b, 1 + a));  // symmetric
      }
    }
  }
}

TEST(CompilerProperties, AlignWithUnequalLengthsAtTheLeastSignificantDigit) {
  const CompiledMask m = compile(R"(tokens a[7], b[3], c[9]
digits a msb_first
digits b lsb_first
digits c lsb_first
open align a, b -> c carry
)");
  for (int64_t j = 0; j < 9; ++j) {
    const int64_t row = 10 + j;
    for (int64_t i = 0; i < 7; ++i) {  // a[i] is place 6 - i
      EXPECT_EQ(m.at(0, 0, row, i) == 10.0f, 6 - i <= j) << j << " a " << i;
    }
    for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(m.at(0, 0, row, 7 + i) == 10.0f, i <= j);
  }
}

TEST(CompilerProperties, CascadeKeepsTheLastWriter) {
  // Overlapping ranges written in order: cell (i, j) ends with the last iteration that covers it.
  const CompiledMask m = compile(R"(tokens x[64]
for s in 0..8 {
  set x[s * 4..s * 4 + 32] -> x[s * 4..s * 4 + 32] = s
}
)");
  for (int64_t i = 0; i < 64; ++i) {
    for (int64_t j = 0; j < 64; ++j) {
      int64_t last = -1;
      for (int64_t s = 0; s < 8; ++s) {
        if (i >= s * 4 && i < s * 4 + 32 && j >= s * 4 && j < s * 4 + 32) last = s;
      }
      ASSERT_EQ(m.at(0, 0, i, j), last < 0 ? -10.0f : static_cast<float>(last));
      ASSERT_EQ(m.provenance[m.index(0, 0, i, j)], last < 0 ? 0 : 4);
    }
  }
}

TEST(CompilerProperties, DistanceAndCausalAtLargeN) {
  const CompiledMask m = compile(R"(param n = 700
tokens t[n]
hard causal
set distance t = max(-10, 10 * (1 - abs(d) / 8))
)");
  for (int64_t i = 0; i < 700; i += 7) {
    for (int64_t j = 0; j < 700; ++j) {
      const double expected =
          std::max(-10.0, 10.0 * (1.0 - static_cast<double>(std::abs(i - j)) / 8.0));
      ASSERT_FLOAT_EQ(m.at(0, 0, i, j), static_cast<float>(expected));
      ASSERT_EQ(m.is_hard(i, j), j > i);
    }
  }
}

TEST(CompilerProperties, PerHeadBlocksAtManyPlanes) {
  const CompiledMask m = compile(R"(tokens x[40]
layers 3
heads 5
open diagonal
for h in 0..5 {
  head h { open x -> x[h] }
}
layers 1..3 { heads 2..4 { close x -> x } }
)");
  for (int64_t l = 0; l < 3; ++l) {
    for (int64_t h = 0; h < 5; ++h) {
      const bool closed = l >= 1 && h >= 2 && h < 4;
      for (int64_t q = 0; q < 40; ++q) {
        for (int64_t k = 0; k < 40; ++k) {
          const bool open = !closed && (k == q || k == h);
          ASSERT_EQ(m.at(l, h, q, k) == 10.0f, open) << l << h << q << k;
        }
      }
    }
  }
}

TEST(CompilerProperties, LargeLocalGridCompiles) {
  const CompiledMask m = compile("tokens p[4096]\ngrid p 64 x 64\nopen local p radius 2\n");
  int64_t open = 0;
  for (int64_t k = 0; k < m.n; ++k) open += m.at(0, 0, 64 * 32 + 32, k) == 10.0f;
  EXPECT_EQ(open, 25);
}

// ----------------------------------------------------------------------------------------------
// Errors: the corpus and a few inline cases

TEST(CompilerErrors, FailCorpusReportsPositionAndMessage) {
  const std::filesystem::path dir = std::filesystem::path(MASKPRIOR_TEST_DATA) / "fail";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".mask") continue;
    std::filesystem::path expected_path = entry.path();
    expected_path.replace_extension(".expected");
    ASSERT_TRUE(std::filesystem::exists(expected_path)) << expected_path;
    std::string expected = read_text(expected_path);
    while (!expected.empty() && (expected.back() == '\n' || expected.back() == '\r')) {
      expected.pop_back();
    }
    const size_t first = expected.find(':');
    const size_t second = expected.find(':', first + 1);
    const int line = std::stoi(expected.substr(0, first));
    const int column = std::stoi(expected.substr(first + 1, second - first - 1));
    const std::string message = expected.substr(second + 2);
    try {
      compile_file(entry.path().string());
      ADD_FAILURE() << entry.path() << " compiled without an error";
    } catch (const SpecError& e) {
      const Diagnostic& d = e.diagnostic();
      EXPECT_EQ(d.where.line, line) << entry.path() << "\n" << e.what();
      EXPECT_EQ(d.where.column, column) << entry.path() << "\n" << e.what();
      EXPECT_NE(d.message.find(message), std::string::npos) << entry.path() << "\n" << e.what();
      EXPECT_EQ(d.where.file, entry.path().string());
      // the diagnostic shows the source line and a caret
      EXPECT_NE(std::string(e.what()).find('^'), std::string::npos) << e.what();
    }
    ++checked;
  }
  EXPECT_GE(checked, 40);
}

TEST(CompilerErrors, DiagnosticFormat) {
  try {
    compile_source("mask parity2\nparam n = 15\ntokens cls, x[n]\nopen cls -> x[15]\n",
                   "parity2.mask");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()),
              "parity2.mask:4:15: error: index x[15] is outside span x of length 15\n"
              "  open cls -> x[15]\n"
              "                ^");
  }
}

TEST(CompilerErrors, InlineCases) {
  expect_spec_error("tokens x[3]\nopen x[1] -> x[1 + 2.5]\n", 3, 16, "an index must be an integer");
  expect_spec_error("tokens x[3]\nlayers 2\nlayer 2 { open diagonal }\n", 4, 7,
                    "layer 2 is outside 0..2");
  expect_spec_error("tokens x[3]\nheads 3\nheads 2..1 { open diagonal }\n", 4, 10,
                    "head range 2..1 is empty");
  expect_spec_error("tokens x[3]\nopen x -> x at 1e39\n", 3, 16, "does not fit in float32");
  expect_spec_error("tokens x[3]\nset distance (x[0], x[0]) = d\n", 3, 14, "distinct tokens");
  EXPECT_THROW(compile_file("/nonexistent/spec.mask"), InputError);
}

TEST(CompilerErrors, ZeroTripLoopBodyIsResolved) {
  // The loop never runs, yet its body is checked before unrolling: an unknown span is an error.
  try {
    compile("tokens x[3]\nfor i in 0..0 { open nosuch -> x[99] }\n");
    ADD_FAILURE() << "the body of a loop that runs zero times was not checked";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.diagnostic().where.line, 3);
    EXPECT_EQ(e.diagnostic().where.column, 22);
    EXPECT_EQ(e.diagnostic().message, "unknown span 'nosuch' (spans: x[3])");
    const std::string what = e.what();
    EXPECT_EQ(what.substr(0, what.find('\n')),
              "t.mask:3:22: error: unknown span 'nosuch' (spans: x[3])");
  }
  // With the span known, the constant index is checked in the same loop.
  expect_spec_error("tokens x[3]\nfor i in 0..0 { open x -> x[99] }\n", 3, 29,
                    "index x[99] is outside span x of length 3");
}

TEST(CompilerErrors, ResolveReportsBeforeExpansion) {
  // The resolve pass checks names, spans and loop-independent indices of every rule before any
  // rule runs; values, sizes and distinct tokens are checked when a rule runs. So an unknown span
  // in a later rule is reported before an earlier rule's bad value.
  expect_spec_error("tokens x[3]\nopen x -> x at 1/0\nopen nosuch -> x\n", 4, 6,
                    "unknown span 'nosuch'");
  expect_spec_error("tokens x[3]\nset distance (x[0], x[0]) = d\nopen nosuch -> x\n", 4, 6,
                    "unknown span 'nosuch'");
  expect_spec_error("tokens x[3]\nopen cycle x window 0\nopen x -> x[7]\n", 4, 13,
                    "index x[7] is outside span x of length 3");
  expect_spec_error("tokens x[3]\nopen x -> x at 1/0\nopen x -> x[7]\n", 4, 13,
                    "index x[7] is outside span x of length 3");
  // Alone, each is reported where it is.
  expect_spec_error("tokens x[3]\nopen x -> x at 1/0\n", 3, 17, "division by zero");
  expect_spec_error("tokens x[3]\nopen cycle x window 0\n", 3, 21, "window 0 must be at least 1");
}

TEST(CompilerErrors, ZeroTripLoopChecksWhatDoesNotDependOnTheLoop) {
  // A range bound that does not depend on the loop variable is checked though the other does.
  expect_spec_error("tokens x[3]\nfor i in 0..0 { open x[5..i] -> x }\n", 3, 24,
                    "range start 5 is outside span x of length 3");
  expect_spec_error("tokens x[3]\nfor i in 0..0 { open x[i..9] -> x }\n", 3, 27,
                    "range end 9 is outside span x of length 3");
  // Loop-independent items of a list, and `before`, are checked item by item.
  expect_spec_error("tokens x[3]\nfor i in 0..0 { open (x[i], x[7]) -> x }\n", 3, 31,
                    "index x[7] is outside span x of length 3");
  expect_spec_error("tokens x[3]\nfor i in 0..0 { open before x -> x }\n", 3, 22,
                    "x[0] is the first token of the layout");
  // What depends on the loop variable is checked only for iterations that run: none here.
  const CompiledMask m =
      compile("tokens x[3]\nfor i in 0..0 { open before x[i] -> x[i + 99], x[2..i] }\n");
  EXPECT_EQ(pattern(m), (Rows{"000", "000", "000"}));
}

TEST(CompilerRules, OverlappingRangesInOneSelector) {
  // Keys x[4], x[1..3], x[2] name x[2] twice; the rows x[0..3], x[2..5] name x[2] twice.
  const CompiledMask m = compile("tokens x[6]\nopen x[0..3], x[2..5] -> x[4], x[1..3], x[2]\n");
  EXPECT_EQ(pattern(m), (Rows{"011010", "011010", "011010", "011010", "011010", "000000"}));
  EXPECT_EQ(pattern(compile("tokens x[5]\nopen clique (x[0..2], x[1..3])\n")),
            (Rows{"11100", "11100", "11100", "00000", "00000"}));
  // Shapes that need distinct tokens name the smallest one named twice.
  expect_spec_error("tokens x[5]\nset distance (x[3..5], x[1..4]) = d\n", 3, 14,
                    "`distance` needs distinct tokens, but x[3] appears twice");
  expect_spec_error("tokens x[5]\nhard causal (x[0..2], x[4], x[1])\n", 3, 13,
                    "`causal` needs distinct tokens, but x[1] appears twice");
  expect_spec_error("tokens x[5]\nhard causal (x[3], before x[3..5])\n", 3, 13,
                    "`causal` needs distinct tokens, but x[3] appears twice");
}

// ----------------------------------------------------------------------------------------------
// Hostile input: integer overflow, work limits, nesting, many names.

TEST(CompilerLimits, IntegerOverflowIsALocatedErrorNotATrap) {
  // INT64_MIN / -1 used to raise SIGFPE (the hardware traps on it), as did INT64_MIN % -1.
  expect_spec_error("param n = (-9223372036854775807-1)/-1\ntokens x[2]\n", 2, 35,
                    "integer overflow in -9223372036854775808 / -1");
  expect_spec_error("param n = -(-9223372036854775807-1)\ntokens x[2]\n", 2, 11,
                    "integer overflow in -(-9223372036854775808)");
  expect_spec_error("param n = 9223372036854775807 * 2\ntokens x[2]\n", 2, 31,
                    "integer overflow in 9223372036854775807 * 2");
  expect_spec_error("param n = 9223372036854775807 + 1\ntokens x[2]\n", 2, 31,
                    "integer overflow in 9223372036854775807 + 1");
  expect_spec_error("param n = (-9223372036854775807-1) - 1\ntokens x[2]\n", 2, 36,
                    "integer overflow in -9223372036854775808 - 1");
  // Every integer is a multiple of -1: the floored remainder is 0, not a trap.
  EXPECT_EQ(compile("param n = (-9223372036854775807-1) % -1 + 2\ntokens x[n]\n").n, 2);
  EXPECT_EQ(compile("param n = 7 % -1 + 3\ntokens x[n]\n").n, 3);
  EXPECT_EQ(compile("param n = -6 / -1\ntokens x[n]\n").n, 6);
  // The same expression given with -D is reported in its own one-line source.
  for (const char* value : {"(-9223372036854775807-1)/-1", "-(-9223372036854775807-1)"}) {
    CompileOptions options;
    options.defines["n"] = value;
    try {
      compile("param n = 2\ntokens x[n]\n", options);
      ADD_FAILURE() << value;
    } catch (const SpecError& e) {
      EXPECT_EQ(e.diagnostic().where.file, "-D n");
      EXPECT_NE(e.diagnostic().message.find("integer overflow"), std::string::npos) << e.what();
    }
  }
  // A caller that takes the values otherwise names them its own way (Python: params['n']).
  CompileOptions options;
  options.defines["n"] = "(-9223372036854775807-1)/-1";
  options.name_define = [](const std::string& name) { return "params['" + name + "']"; };
  EXPECT_EQ(spec_error([&] { compile("param n = 2\ntokens x[n]\n", options); }),
            "params['n']:1:25: error: integer overflow in -9223372036854775808 / -1\n"
            "  (-9223372036854775807-1)/-1\n"
            "                          ^");
  options.defines = {{"m", "3"}};
  EXPECT_EQ(input_error([&] { compile("param n = 2\ntokens x[n]\n", options); }),
            "params['m'] = '3': t.mask has no parameter m (its parameters: n)");
}

// --open/--close and Python's open=/close= obey the rule of a spec's `scale`: finite as float32.
// The compiler applies it to every CompileOptions, so no caller can pass NaN or -1e308.
TEST(CompilerLimits, OpenAndCloseOverridesMustBeFiniteFloat32) {
  const std::pair<double, const char*> cases[] = {
      {std::nan(""), "nan"}, {-1e308, "-1e+308"}, {1e39, "1e+39"}, {HUGE_VAL, "inf"}};
  for (const auto& [bad, text] : cases) {
    CompileOptions options;
    options.close_value = bad;
    EXPECT_EQ(input_error([&] { compile("tokens x[2]\n", options); }),
              std::string("the close value ") + text +
                  " is not a finite float32 number (it must be finite and at most 3.40282e+38 "
                  "in magnitude)");
  }
  CompileOptions options;
  options.open_value = 3e38;
  options.close_value = -3e38;
  const CompiledMask m = compile("tokens x[2]\ndefault close\nopen x[0] -> x[1]\n", options);
  EXPECT_EQ(m.at(0, 0, 0, 1), 3e38f);
  EXPECT_EQ(m.at(0, 0, 1, 0), -3e38f);
}

TEST(CompilerLimits, LoopIterationsAreCountedBeforeTheyRun) {
  // The whole range of a loop counts when it starts, so these fail at once (they ran 13 s and
  // over a minute), even with empty bodies.
  expect_spec_error("tokens x[2]\nfor i in 0..1000000000 { }\n", 3, 1,
                    "this loop would take the spec past 10000000 loop iterations (0 before it, "
                    "1000000000 more here)");
  expect_spec_error("tokens x[2]\nfor i in 0..100000 { for j in 0..100000 { } }\n", 3, 22,
                    "past 10000000 loop iterations");
  // Within the limit, loops run as before.
  const CompiledMask m =
      compile("tokens x[4]\nfor i in 0..4 { for j in 0..i { open x[i] -> x[j] } }\n");
  EXPECT_EQ(m.at(0, 0, 3, 0), m.open_value);
  EXPECT_EQ(m.at(0, 0, 0, 3), m.close_value);
}

TEST(CompilerLimits, SelectorListsAreBoundedByTheSizeCap) {
  // 64 tokens: the cap allows 64·64 cells, one rule may list twice that many tokens. 200 copies
  // of x list 12,800: refused at the item that passes 8,192, before listing it.
  CompileOptions options;
  options.max_bytes = 64 * 64 * 8;
  std::string list = "x";
  for (int i = 1; i < 200; ++i) list += ", x";
  try {
    compile("tokens x[64]\nopen (" + list + ") -> x\n", options);
    ADD_FAILURE() << "a 12,800-token list passed a cap of 4,096 cells";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.diagnostic().where.line, 3);
    EXPECT_EQ(e.diagnostic().where.column, 7 + 3 * 128);  // the 129th x: 8,192 + 64 > 8,192
    EXPECT_NE(e.diagnostic().message.find("this rule would list more than 8192 tokens (8192 "
                                          "before this item, 64 more here)"),
              std::string::npos)
        << e.what();
  }
  // 100 copies (6,400 tokens) are within the limit and compile.
  std::string shorter = "x";
  for (int i = 1; i < 100; ++i) shorter += ", x";
  EXPECT_EQ(compile("tokens x[64]\nopen (" + shorter + ") -> x\n", options).at(0, 0, 5, 7), 10.0f);
}

TEST(CompilerLimits, CellsWrittenAreBoundedByTheSizeCap) {
  // Each application of `open x -> x` writes 4,096 cells (+128 tokens listed); the spec may do
  // 16 x 4,096 cells of work, so the 16th application is refused before it writes.
  CompileOptions options;
  options.max_bytes = 64 * 64 * 8;
  try {
    compile("tokens x[64]\nfor i in 0..100 { open x -> x }\n", options);
    ADD_FAILURE() << "100 full rewrites passed a work limit of 16";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.diagnostic().where.line, 3);
    EXPECT_EQ(e.diagnostic().where.column, 19);
    EXPECT_NE(e.diagnostic().message.find("the spec's cell work would pass its limit of 65536"),
              std::string::npos)
        << e.what();
  }
  // Planes count: 4 heads x 15 applications of 4,096 cells pass the limit.
  options.max_bytes = 4 * 16 * 16 * 8;
  try {
    compile("tokens x[16]\nheads 4\nfor i in 0..100 { open x -> x }\n", options);
    ADD_FAILURE();
  } catch (const SpecError& e) {
    EXPECT_NE(e.diagnostic().message.find("cell work would pass its limit of 16384"),
              std::string::npos)
        << e.what();
  }
}

TEST(CompilerLimits, ProductWithCarryListsNoMoreThanItWrites) {
  // `product a, b -> c carry` listed a cell per (i, k) pair for every place of c: 10^9 entries
  // (12 GB) for 1000-digit operands. Its rows are now ranges: compare with the definition, under
  // a cap exactly the size of the output.
  const std::string body =
      "tokens a[40], b[30], c[70]\ndigits a lsb_first\ndigits b msb_first\ndigits c lsb_first\n"
      "open product a, b -> c carry\nopen product c, b -> a\n";
  CompileOptions options;
  options.max_bytes = 140 * 140 * 8;
  const CompiledMask m = compile(body, options);
  auto a = [](int64_t i) { return i; };
  auto b = [](int64_t k) { return 40 + 29 - k; };
  auto c = [](int64_t j) { return 70 + j; };
  std::set<std::pair<int64_t, int64_t>> open;
  for (int64_t j = 0; j < 70; ++j) {
    for (int64_t i = 0; i < 40; ++i) {
      for (int64_t k = 0; k < 30; ++k) {
        if (i + k <= j) {
          open.insert({c(j), a(i)});
          open.insert({c(j), b(k)});
        }
      }
    }
  }
  for (int64_t j = 0; j < 40; ++j) {  // c, b -> a without carry: a[j] -> c[i], b[k], i + k = j
    for (int64_t i = 0; i < 70; ++i) {
      for (int64_t k = 0; k < 30; ++k) {
        if (i + k == j) {
          open.insert({a(j), c(i)});
          open.insert({a(j), b(k)});
        }
      }
    }
  }
  for (int64_t q = 0; q < m.n; ++q) {
    for (int64_t k = 0; k < m.n; ++k) {
      EXPECT_EQ(m.at(0, 0, q, k) == m.open_value, open.count({q, k}) == 1) << q << " -> " << k;
    }
  }
}

TEST(CompilerLimits, CycleWithAWindowAllTheWayRoundIsAClique) {
  const CompiledMask cycle = compile("tokens x[6]\nopen cycle x window 4\n");
  const CompiledMask clique = compile("tokens x[6]\nopen clique x\n");
  EXPECT_EQ(pattern(cycle), pattern(clique));
  EXPECT_EQ(pattern(compile("tokens x[7]\nopen cycle x window 3\n"))[0], "1110011");
}

// The message of the SpecError compiling `body` raises ("" if none).
std::string spec_error_message(const std::string& body) {
  try {
    compile(body);
  } catch (const SpecError& e) {
    return e.diagnostic().message;
  }
  return "";
}

TEST(CompilerLimits, DeepNestingIsAnErrorNotAStackOverflow) {
  // 100,000 nested parentheses, `for` blocks, `-` or `before` overflowed the parser's stack.
  const int deep = 100000;
  const std::string parens = std::string(deep, '(') + "1" + std::string(deep, ')');
  EXPECT_NE(spec_error_message("param p = " + parens + "\ntokens x[2]\n").find("nesting too deep"),
            std::string::npos);
  std::string loops;
  for (int i = 0; i < deep; ++i) loops += "for i" + std::to_string(i) + " in 0..1 {\n";
  const std::string nested = loops + "open diagonal\n" + std::string(deep, '}');
  EXPECT_NE(spec_error_message("tokens x[2]\n" + nested).find("nesting too deep"),
            std::string::npos);
  std::string minus;
  for (int i = 0; i < deep; ++i) minus += "- ";
  EXPECT_NE(spec_error_message("param p = " + minus + "1\ntokens x[2]\n").find("nesting too deep"),
            std::string::npos);
  std::string before;
  for (int i = 0; i < deep; ++i) before += "before ";
  EXPECT_NE(spec_error_message("tokens x[2]\nopen " + before + "x -> x\n").find("nesting too deep"),
            std::string::npos);
  // 300 nested loops are fine (their names cost no copies per level).
  std::string ok;
  for (int i = 0; i < 300; ++i) ok += "for i" + std::to_string(i) + " in 0..1 { ";
  const CompiledMask m =
      compile("tokens x[2]\n" + ok + "open diagonal " + std::string(300, '}') + "\n");
  EXPECT_EQ(pattern(m), (Rows{"10", "01"}));
}

// A flat chain `1+1+…+1` nests no rule of the grammar, yet builds a tree one level deeper per
// operator, and every pass over it recursed that deep: 30,000 terms overflowed the stack. Past
// ast::kMaxExprHeight levels it is a located error, in a param, an index or a -D value; a chain
// just under the limit compiles.
TEST(CompilerLimits, LongOperatorChainsAreAnErrorNotAStackOverflow) {
  auto chain = [](const char* op, int terms, const char* term) {
    std::string text = term;
    for (int i = 1; i < terms; ++i) text += std::string(op) + term;
    return text;
  };
  for (const char* op : {"+", "*", "-", "/", "%"}) {
    SCOPED_TRACE(op);
    const std::string param = "param n = " + chain(op, 30000, "1") + "\ntokens x[3]\n";
    // The operator that takes the tree past the limit: term k + 1 of "1", one column each.
    // (line 1 is `mask t`; operator k stands at column 12 + 2 (k − 1))
    expect_spec_error(param, 2, 10 + 2 * ast::kMaxExprHeight, "expression too deep");
  }
  expect_spec_error("tokens x[3]\nopen x[0] -> x[" + chain("+", 30000, "0") + "]\n", 3,
                    15 + 2 * ast::kMaxExprHeight, "expression too deep");
  expect_spec_error("param n = f(" + chain("+", 30000, "1") + ")\ntokens x[3]\n", 2,
                    12 + 2 * ast::kMaxExprHeight, "expression too deep");
  const CompiledMask ok =
      compile("param n = " + chain("+", ast::kMaxExprHeight - 1, "1") + "\ntokens x[n - " +
              std::to_string(ast::kMaxExprHeight - 4) + "]\nopen diagonal\n");
  EXPECT_EQ(ok.n, 3);
  CompileOptions options;
  options.defines["n"] = chain("+", 30000, "1");
  try {
    compile("param n = 2\ntokens x[n]\n", options);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("expression too deep"), std::string::npos) << e.what();
  }
}

TEST(CompilerLimits, ManySpansAndRulesByName) {
  // Span lookups are by hash: 3,000 spans and rules naming the last ones.
  std::string spans = "t0";
  for (int i = 1; i < 3000; ++i) spans += ", t" + std::to_string(i);
  expect_spec_error("tokens " + spans + ", t2999\n", 2, static_cast<int>(spans.size() + 10),
                    "duplicate span name t2999");
  std::string rules;
  for (int i = 2990; i < 3000; ++i) rules += "open t" + std::to_string(i) + " -> t0\n";
  const CompiledMask m = compile("tokens " + spans + "\ndigits t2999 lsb_first\n" + rules);
  EXPECT_EQ(m.n, 3000);
  EXPECT_EQ(m.at(0, 0, 2995, 0), m.open_value);
  EXPECT_EQ(m.at(0, 0, 2989, 0), m.close_value);
}

}  // namespace
}  // namespace maskprior
