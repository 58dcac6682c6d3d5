// Tests of core: the layout's token labels and their binding to tokens.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "core/layout.h"
#include "tests/test_util.h"

namespace maskprior {
namespace {

using testing::input_error;

// ---------------------------------------------------------------------------------------------
// Token labels: Layout::token_label and its inverse Layout::token_index.

/// `cls, x[4], op, y[12]`: spans of one token print bare, the others with an index.
Layout mixed_layout() {
  return make_layout({{"cls", 1}, {"x", 4}, {"op", 1}, {"y", 12}});
}

TEST(Layout, TokenLabelsAndIndicesRoundTrip) {
  const Layout layout = mixed_layout();
  ASSERT_EQ(layout.size(), 18);
  EXPECT_EQ(layout.token_label(0), "cls");
  EXPECT_EQ(layout.token_label(1), "x[0]");
  EXPECT_EQ(layout.token_label(5), "op");
  EXPECT_EQ(layout.token_label(17), "y[11]");
  EXPECT_EQ(layout.token_label(18), "#18");  // past the end: no span holds it
  for (int64_t t = 0; t < layout.size(); ++t) {
    EXPECT_EQ(layout.token_index(layout.token_label(t)), t) << layout.token_label(t);
  }
}

TEST(Layout, TokenIndexReadsEveryLabelForm) {
  const Layout layout = mixed_layout();
  EXPECT_EQ(layout.token_index("x[3]"), 4);
  EXPECT_EQ(layout.token_index("x3"), 4);    // span x, index 3
  EXPECT_EQ(layout.token_index("y11"), 17);  // a two-digit index
  EXPECT_EQ(layout.token_index("cls"), 0);
  EXPECT_EQ(layout.token_index("before x[0]"), 0);
  EXPECT_EQ(layout.token_index("before before op"), 3);
  EXPECT_EQ(layout.token_index("before y[0]"), 5);
}

TEST(Layout, TokenIndexRefusesWhatNamesNoToken) {
  const Layout layout = mixed_layout();
  for (const std::string label :
       {"x[4]", "x4", "x", "y", "z[0]", "before cls", "x[-1]", "x[]", "x[1", "x[a]", "[0]", "3", "",
        "cls[0]x", "x[1]]", "before ", "x[99999999999999999999]"}) {
    EXPECT_EQ(layout.token_index(label), std::nullopt) << label;
  }
}

// ---------------------------------------------------------------------------------------------
// Binding a table's column names to tokens (maskc validate/train --truth-table).

TEST(BindTokenLabels, BindsColumnsInOrder) {
  const Layout layout = mixed_layout();
  EXPECT_EQ(bind_token_labels(layout, {"x2", "y[0]", "op", "x[0]"}, "t.csv", "s"),
            (std::vector<int64_t>{3, 6, 5, 1}));
  EXPECT_EQ(bind_token_labels(layout, {}, "t.csv", "s"), std::vector<int64_t>{});
}

TEST(BindTokenLabels, NamesTheFileTheColumnAndTheSpec) {
  const Layout layout = mixed_layout();
  EXPECT_EQ(input_error([&] {
              bind_token_labels(layout, {"x0", "z9"}, "b.csv", "hand");
            }),
            "b.csv:1: column 'z9' names no token of spec 'hand' (tokens are named like y[11])");
  EXPECT_EQ(input_error([&] {
              bind_token_labels(layout, {"x0", "x[0]"}, "t.csv", "hand");
            }),
            "t.csv:1: columns 'x0' and 'x[0]' both name token x[0]");
  EXPECT_EQ(input_error([&] {
              bind_token_labels(layout, {"cls", "before x0"}, "t.csv", "s");
            }),
            "t.csv:1: columns 'cls' and 'before x0' both name token cls");
  // Echoed input is inert: a control character in a column name is escaped.
  EXPECT_EQ(input_error([&] { bind_token_labels(layout, {"a\x1b[31m"}, "c.csv", "s"); }),
            "c.csv:1: column 'a\\x1b[31m' names no token of spec 's' (tokens are named like "
            "y[11])");
  // A layout of one token has no last token worth showing as an example.
  EXPECT_EQ(input_error([&] {
              bind_token_labels(make_layout({{"cls", 1}}), {"x"}, "o.csv", "s");
            }),
            "o.csv:1: column 'x' names no token of spec 's' (tokens are named like x[0])");
}

}  // namespace
}  // namespace maskprior
