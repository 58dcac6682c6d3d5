// The message of every place the .mask parser can fail, and the control that raises them.
//
// As in PEGTL's json_errors.hpp: each rule used under `must<>` has a message here; with
// `RequireMessage`, a `must<>` of a rule without a message does not compile.
#pragma once

#include <tao/pegtl.hpp>

#include "grammar/mask_grammar.hpp"

namespace maskprior::grammar {

template <typename Rule>
inline constexpr const char* error_message = nullptr;

// clang-format off
// Expressions
template <> inline constexpr auto error_message<paren_body> = "expected an expression after `(`";
template <> inline constexpr auto error_message<paren_close> = "expected `)` to close the parenthesis";
template <> inline constexpr auto error_message<call_arg> = "expected a function argument (an expression)";
template <> inline constexpr auto error_message<call_close> = "expected `,` or `)` after a function argument";
template <> inline constexpr auto error_message<negation_operand> = "expected an operand after `-`";
template <> inline constexpr auto error_message<term_operand> = "expected an operand after `*`, `/` or `%`";
template <> inline constexpr auto error_message<expr_operand> = "expected an operand after `+` or `-`";

// Selectors
template <> inline constexpr auto error_message<index_body> = "expected an index or a range `a..b` inside `[ ]`";
template <> inline constexpr auto error_message<index_close> = "expected `]` to close the index";
template <> inline constexpr auto error_message<before_operand> = "expected a selector after `before`";
template <> inline constexpr auto error_message<group_body> = "expected a selector list after `(`";
template <> inline constexpr auto error_message<group_close> = "expected `,` or `)` in a parenthesised selector list";
template <> inline constexpr auto error_message<list_item> = "expected a selector (a span name, `name[i]`, `name[a..b]` or `before X`) after `,`";

// Shapes
template <> inline constexpr auto error_message<directed_arrow> = "expected `->` after the query selector";
template <> inline constexpr auto error_message<directed_target> = "expected a key selector after `->`";
template <> inline constexpr auto error_message<pair_first> = "expected a selector after `pair`";
template <> inline constexpr auto error_message<pair_comma> = "expected `,` between the two selectors of `pair` (parenthesise lists: `pair (a, b), c`)";
template <> inline constexpr auto error_message<pair_second> = "expected the second selector of `pair`";
template <> inline constexpr auto error_message<clique_list> = "expected a selector after `clique`";
template <> inline constexpr auto error_message<cycle_list> = "expected a selector after `cycle`";
template <> inline constexpr auto error_message<cycle_window_kw> = "expected `window` after the selector of `cycle`";
template <> inline constexpr auto error_message<cycle_window> = "expected the window size (an expression) after `window`";
template <> inline constexpr auto error_message<operand_a> = "expected the first operand span";
template <> inline constexpr auto error_message<operand_comma> = "expected `,` between the two operand spans";
template <> inline constexpr auto error_message<operand_b> = "expected the second operand span";
template <> inline constexpr auto error_message<operand_arrow> = "expected `->` before the result span";
template <> inline constexpr auto error_message<operand_c> = "expected the result span (or `before SPAN`) after `->`";
template <> inline constexpr auto error_message<lag_value> = "expected the lag (an expression) after `lag`";
template <> inline constexpr auto error_message<radius_value> = "expected the radius (an expression) after `radius`";
template <> inline constexpr auto error_message<metric_name> = "expected `chebyshev` or `manhattan` after `metric`";
template <> inline constexpr auto error_message<dilation_value> = "expected the dilation (an expression) after `dilation`";
template <> inline constexpr auto error_message<local_grid> = "expected a grid span after `local`";
template <> inline constexpr auto error_message<local_first_option> = "expected `radius R` after the grid span of `local`";
template <> inline constexpr auto error_message<shift_grid> = "expected a grid span after `shift`";
template <> inline constexpr auto error_message<shift_by> = "expected `by` after the grid span of `shift`";
template <> inline constexpr auto error_message<shift_open> = "expected `(` after `by`: `shift G by (dy, dx)`";
template <> inline constexpr auto error_message<shift_dy> = "expected the row offset dy (an expression)";
template <> inline constexpr auto error_message<shift_comma> = "expected `,` between dy and dx";
template <> inline constexpr auto error_message<shift_dx> = "expected the column offset dx (an expression)";
template <> inline constexpr auto error_message<shift_close> = "expected `)` after dx";
template <> inline constexpr auto error_message<distance_list> = "expected a selector after `distance`";

// Rules
template <> inline constexpr auto error_message<at_expr> = "expected a value (an expression) after `at`";
template <> inline constexpr auto error_message<open_shape> = "expected a rule shape after `open`: `A -> B`, `pair`, `clique`, `diagonal`, `cycle`, `align`, `product`, `local`, `shift` or `distance`";
template <> inline constexpr auto error_message<close_shape> = "expected a rule shape after `close`: `A -> B`, `pair`, `clique`, `diagonal`, `cycle`, `align`, `product`, `local`, `shift` or `distance`";
template <> inline constexpr auto error_message<set_shape> = "expected a rule shape after `set`: `A -> B`, `pair`, `clique`, `diagonal`, `cycle`, `align`, `product`, `local`, `shift` or `distance`";
template <> inline constexpr auto error_message<set_equals> = "expected `= VALUE` after the shape of `set`";
template <> inline constexpr auto error_message<set_value> = "expected a value (an expression) after `=`";
template <> inline constexpr auto error_message<hard_shape> = "expected `causal` or a rule shape after `hard`";

// Blocks
template <> inline constexpr auto error_message<block_open> = "expected `{` to open the block";
template <> inline constexpr auto error_message<block_close> = "expected a rule (`open`, `close`, `set`, `hard`), a block (`for`, `head`, `heads`, `layer`, `layers`) or `}`";
template <> inline constexpr auto error_message<loop_var> = "expected a loop variable name after `for`";
template <> inline constexpr auto error_message<for_in> = "expected `in` after the loop variable";
template <> inline constexpr auto error_message<for_begin> = "expected the start of the range (an expression) after `in`";
template <> inline constexpr auto error_message<for_dotdot> = "expected `..` in the loop range `a..b`";
template <> inline constexpr auto error_message<for_end> = "expected the end of the range (an expression) after `..`";
template <> inline constexpr auto error_message<head_index> = "expected a head index (an expression) after `head`";
template <> inline constexpr auto error_message<heads_end> = "expected the end of the head range after `..`";
template <> inline constexpr auto error_message<layer_index> = "expected a layer index (an expression) after `layer`";
template <> inline constexpr auto error_message<layers_end> = "expected the end of the layer range after `..`";

// Declarations
template <> inline constexpr auto error_message<spec_name> = "expected the spec name after `mask`";
template <> inline constexpr auto error_message<param_name> = "expected a parameter name after `param` (keywords are reserved)";
template <> inline constexpr auto error_message<param_equals> = "expected `=` after the parameter name";
template <> inline constexpr auto error_message<param_value> = "expected the parameter value (an expression) after `=`";
template <> inline constexpr auto error_message<span_length> = "expected the span length (an expression) after `[`";
template <> inline constexpr auto error_message<span_length_close> = "expected `]` after the span length";
template <> inline constexpr auto error_message<first_span_decl> = "expected a span (`name` or `name[LENGTH]`) after `tokens` (keywords are reserved)";
template <> inline constexpr auto error_message<next_span_decl> = "expected a span (`name` or `name[LENGTH]`) after `,` (keywords are reserved)";
template <> inline constexpr auto error_message<digits_span> = "expected a span name after `digits`";
template <> inline constexpr auto error_message<digit_order> = "expected `lsb_first` or `msb_first`";
template <> inline constexpr auto error_message<grid_span> = "expected a span name after `grid`";
template <> inline constexpr auto error_message<grid_height> = "expected the grid height (an expression): `grid SPAN H x W`";
template <> inline constexpr auto error_message<grid_times> = "expected `x` between the grid height and width: `grid SPAN H x W`";
template <> inline constexpr auto error_message<grid_width> = "expected the grid width (an expression) after `x`";
template <> inline constexpr auto error_message<scale_equals> = "expected `=` after `open` or `close` in `scale`";
template <> inline constexpr auto error_message<scale_value> = "expected a value (an expression) after `=`";
template <> inline constexpr auto error_message<first_scale_item> = "expected `open = VALUE` or `close = VALUE` after `scale`";
template <> inline constexpr auto error_message<next_scale_item> = "expected `open = VALUE` or `close = VALUE` after `,`";
template <> inline constexpr auto error_message<layers_count> = "expected the number of layers (an expression) or a range `a..b {` after `layers`";
template <> inline constexpr auto error_message<heads_count> = "expected the number of heads (an expression) or a range `a..b {` after `heads`";
template <> inline constexpr auto error_message<default_value> = "expected `open`, `close` or a value after `default`";

// The file
template <> inline constexpr auto error_message<first_statement> = "expected `mask NAME` as the first statement";
template <> inline constexpr auto error_message<end_of_spec> = "expected a statement: a declaration (`param`, `tokens`, `digits`, `grid`, `scale`, `layers`, `heads`, `default`), a rule (`open`, `close`, `set`, `hard`) or a block (`for`, `head`, `heads`, `layer`, `layers`)";
template <> inline constexpr auto error_message<define_expr> = "expected a value (a number or an expression)";
template <> inline constexpr auto error_message<define_end> = "unexpected text after the value";
// clang-format on

/// The error policy for must_if: a rule's message, or nullptr.
struct errors {
  template <typename Rule>
  static constexpr auto message = error_message<Rule>;
};

/// Parser control: a failing rule that has a message raises a parse_error with it.
template <typename Rule>
using control = tao::pegtl::must_if<errors>::control<Rule>;

}  // namespace maskprior::grammar
