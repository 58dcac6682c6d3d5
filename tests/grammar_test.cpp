// Tests of the .mask grammar: no left recursion or empty loops (there and in the --depends
// grammar built from its lexemes), accepted and rejected inputs with the message and column of
// each rejection.
#include <gtest/gtest.h>

#include <string>
#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/analyze.hpp>
#include <vector>

#include "grammar/depends_grammar.hpp"
#include "grammar/errors.hpp"
#include "grammar/mask_grammar.hpp"

namespace maskprior::grammar {
namespace {

namespace pegtl = tao::pegtl;

// Parses `text` as a whole spec; returns "" on success or "line:col: message" on failure.
std::string parse_spec_text(const std::string& text) {
  pegtl::memory_input in(text, "t.mask");
  try {
    if (!pegtl::parse<spec, pegtl::nothing, control>(in)) return "failed without a message";
    return "";
  } catch (const pegtl::parse_error& e) {
    const pegtl::position& p = e.positions().front();
    return std::to_string(p.line) + ":" + std::to_string(p.column) + ": " +
           std::string(e.message());
  }
}

TEST(Grammar, AnalyzeFindsNoProblems) {
  EXPECT_EQ(pegtl::analyze<spec>(/*verbose=*/1), 0u);
  EXPECT_EQ(pegtl::analyze<define_value>(/*verbose=*/1), 0u);
  EXPECT_EQ(pegtl::analyze<depends::text>(/*verbose=*/1), 0u);
}

TEST(Grammar, AcceptsEveryConstruct) {
  const std::vector<std::string> bodies = {
      "",
      "# only a comment\n",
      "param n = 15\nparam r = 0.5\nparam e = 1e-3\nparam k = -(n + 1) * 2 / 3 % 4\n",
      "param m = max(1, min(2, 3)) + abs(-1) + log(exp(1))\n",
      "tokens cls, x[n], y[2 * n + 1]\n",
      "digits a lsb_first\ndigits b msb_first\n",
      "grid p 4 x 4\ngrid p 4x4\ngrid p h x w\n",
      "scale open = 10, close = -10\nscale close = -1\n",
      "layers 2\nheads 4\n",
      "default open\ndefault close\ndefault -2.5\n",
      "open cls -> x[0], x[1]\n",
      "open before c -> (a, b[0..2]), x[-1], x[..k], x[k..], x[..]\n",
      "open pair x[0], x[1]\nopen pair (x[0], x[1]), x[2]\n",
      "open clique x[0..3]\nclose clique a, b\n",
      "open diagonal\nopen diagonal x\n",
      "open cycle x window 3\n",
      "open align a, b -> c\nopen align a, b -> before c carry\n",
      "open product a, b -> c carry\n",
      "open product a, b -> before c lag 2\nopen align a, b -> c carry lag h + 1 at 3\n",
      "open local p radius 1\nopen local p radius 2 metric manhattan dilation 2\n"
      "open local p dilation 2 metric chebyshev radius 3\n",
      "open shift p by (1, -1)\n",
      "set distance x = -0.1 * abs(d)\n",
      "open x -> y at 2.5\nclose x -> y at -1\nset x -> y = 3\n",
      "hard causal\nhard causal x\nhard a -> b\nhard pair a, b\n",
      "for i in 0..n { open x[i] -> x[i + 1] }\n",
      "head 0 { open diagonal }\nheads 0..2 { close diagonal }\n",
      "layer 1 { head 2 { open diagonal } }\nlayers 0..n-1 { for i in 0..2 { } }\n",
      "open x->y\nopen x[n-1]->y[0]\n",
  };
  for (const std::string& body : bodies) {
    EXPECT_EQ(parse_spec_text("mask m\n" + body), "") << body;
  }
  // keywords may name the spec
  EXPECT_EQ(parse_spec_text("mask distance\n"), "");
  // statements may share a line
  EXPECT_EQ(parse_spec_text("mask m tokens x[2] open diagonal"), "");
}

TEST(Grammar, RejectsWithPositionAndMessage) {
  struct Case {
    std::string text;
    std::string expected;  // "line:col: message prefix"
  };
  const std::vector<Case> cases = {
      {"tokens x[3]", "1:1: expected `mask NAME`"},
      {"mask", "1:5: expected the spec name"},
      {"mask m\nparam open = 1", "2:7: expected a parameter name"},
      {"mask m\nparam n 3", "2:9: expected `=`"},
      {"mask m\nparam n = ", "2:11: expected the parameter value"},
      {"mask m\nparam n = (1", "2:13: expected `)`"},
      {"mask m\nparam n = 1 +", "2:14: expected an operand after `+`"},
      {"mask m\nparam n = max(1", "2:16: expected `,` or `)` after a function argument"},
      {"mask m\ntokens", "2:7: expected a span"},
      {"mask m\ntokens x[", "2:10: expected the span length"},
      {"mask m\ntokens x[3", "2:11: expected `]`"},
      {"mask m\ntokens x, ", "2:11: expected a span"},
      {"mask m\ndigits x", "2:9: expected `lsb_first` or `msb_first`"},
      {"mask m\ngrid p 3 4", "2:10: expected `x`"},
      {"mask m\nscale wide = 1", "2:7: expected `open = VALUE` or `close = VALUE`"},
      {"mask m\ndefault", "2:8: expected `open`, `close` or a value"},
      {"mask m\nopen", "2:5: expected a rule shape after `open`"},
      {"mask m\nopen x", "2:7: expected `->`"},
      {"mask m\nopen x ->", "2:10: expected a key selector"},
      {"mask m\nopen x, -> y", "2:9: expected a selector"},
      {"mask m\nopen x[] -> y", "2:8: expected an index or a range"},
      {"mask m\nopen x[1 -> y", "2:10: expected `]`"},
      {"mask m\nopen pair a b", "2:13: expected `,` between the two selectors of `pair`"},
      {"mask m\nopen cycle x 3", "2:14: expected `window`"},
      {"mask m\nopen align a b", "2:14: expected `,` between the two operand spans"},
      {"mask m\nopen align a, b c", "2:17: expected `->` before the result span"},
      {"mask m\nopen local p", "2:13: expected `radius R`"},
      {"mask m\nopen local p radius 1 metric l2", "2:30: expected `chebyshev` or `manhattan`"},
      {"mask m\nopen shift p (1, 1)", "2:14: expected `by`"},
      {"mask m\nopen shift p by 1, 1", "2:17: expected `(`"},
      {"mask m\nopen shift p by (1 1)", "2:20: expected `,` between dy and dx"},
      {"mask m\nset x -> y", "2:11: expected `= VALUE`"},
      {"mask m\nopen x -> y at", "2:15: expected a value"},
      {"mask m\nhard", "2:5: expected `causal` or a rule shape"},
      {"mask m\nfor 1 in 0..2 { }", "2:5: expected a loop variable"},
      {"mask m\nfor i 0..2 { }", "2:7: expected `in`"},
      {"mask m\nfor i in 0 2 { }", "2:12: expected `..`"},
      {"mask m\nfor i in 0..2 open", "2:15: expected `{`"},
      {"mask m\nfor i in 0..2 { param k = 1 }", "2:17: expected a rule"},
      {"mask m\nhead { }", "2:6: expected a head index"},
      {"mask m\nheads 0.. { }", "2:11: expected the end of the head range"},
      {"mask m\nlayers", "2:7: expected the number of layers"},
      {"mask m\nbogus", "2:1: expected a statement"},
      {"mask m\nmask n", "2:1: expected a statement"},
  };
  for (const Case& c : cases) {
    const std::string result = parse_spec_text(c.text);
    EXPECT_EQ(result.substr(0, c.expected.size()), c.expected) << c.text << "\n -> " << result;
  }
}

TEST(Grammar, DefineValues) {
  auto parse_define = [](const std::string& text) {
    pegtl::memory_input in(text, "-D");
    try {
      return pegtl::parse<define_value, pegtl::nothing, control>(in);
    } catch (const pegtl::parse_error&) {
      return false;
    }
  };
  EXPECT_TRUE(parse_define("20"));
  EXPECT_TRUE(parse_define(" -1.5e2 "));
  EXPECT_TRUE(parse_define("2 * (3 + 1)"));
  EXPECT_FALSE(parse_define(""));
  EXPECT_FALSE(parse_define("3 x"));
  EXPECT_FALSE(parse_define("open"));
}

}  // namespace
}  // namespace maskprior::grammar
