#include "compiler/parse.h"

#include <fmt/format.h>

#include <algorithm>

#include <cctype>
#include <charconv>
#include <cstdlib>

#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/limit_depth.hpp>
#include <tao/pegtl/contrib/parse_tree.hpp>

#include "grammar/errors.hpp"
#include "grammar/mask_grammar.hpp"

namespace maskprior {
namespace {

namespace pegtl = tao::pegtl;
namespace g = grammar;

// How deep grammar rules may nest while parsing. Each level of a block or of parentheses takes a
// few dozen rules, so real specs stay far below; hostile nesting (100,000 `(` or `for`) is an
// error here instead of a stack overflow in the parser, the AST or the evaluator.
constexpr size_t kMaxRuleDepth = 4000;
constexpr const char* kDepthMessage = "maximum parser rule nesting depth exceeded";

template <typename Rule>
struct depth_limit : pegtl::limit_depth<kMaxRuleDepth> {};

// The message of a parse error, with PEGTL's depth message said in the spec's terms.
std::string parse_message(const pegtl::parse_error& e) {
  if (e.message() != kDepthMessage) return std::string(e.message());
  return "nesting too deep: blocks, parentheses, `-` or `before` nest here more than the parser "
         "allows (a few hundred levels)";
}
using Node = pegtl::parse_tree::node;

// The grammar rules kept in the parse tree; `term` and `expr` with one child fold into it.
template <typename Rule>
using tree_selector = pegtl::parse_tree::selector<
    Rule,
    pegtl::parse_tree::store_content::on<
        g::name, g::number, g::call, g::negation, g::op_add, g::op_sub, g::op_mul, g::op_div,
        g::op_mod, g::range_index, g::range_begin, g::range_end, g::single_index, g::span_ref,
        g::before_item, g::group_item, g::sel_list, g::directed_shape, g::pair_shape,
        g::clique_shape, g::diagonal_shape, g::cycle_shape, g::align_shape, g::product_shape,
        g::carry, g::lag_option, g::local_shape, g::radius_option, g::metric_option,
        g::dilation_option, g::kw_chebyshev, g::kw_manhattan, g::shift_shape, g::distance_shape,
        g::causal_shape, g::at_value, g::open_rule, g::close_rule, g::set_rule, g::hard_rule,
        g::for_block, g::head_block, g::heads_block, g::layer_block, g::layers_block, g::mask_decl,
        g::param_decl, g::span_decl, g::tokens_decl, g::digits_decl, g::kw_lsb_first,
        g::kw_msb_first, g::grid_decl, g::scale_item, g::scale_decl, g::kw_open, g::kw_close,
        g::layers_decl, g::heads_decl, g::default_decl, g::spec_word>,
    pegtl::parse_tree::fold_one::on<g::term, g::expr>>;

ast::Pos pos_of(const Node& n) {
  const pegtl::position p = n.begin();
  return ast::Pos{static_cast<int>(p.line), static_cast<int>(p.column)};
}

ast::ExprPtr build_expr(const Node& n);

/// Thrown by build_expr for a tree deeper than ast::kMaxExprHeight, at the operator (or the
/// operand) where it got too deep; parse_spec and parse_define_value report it.
struct TooDeep {
  ast::Pos pos;
};

std::string too_deep_message() {
  return fmt::format(
      "expression too deep: more than {} levels of operators and nesting (a chain such as "
      "1+1+...+1 counts one level per operator); split it, e.g. into several `param`s",
      ast::kMaxExprHeight);
}

/// Sets e's height from its arguments; TooDeep at `pos` past the limit.
void set_height(ast::Expr& e, ast::Pos pos) {
  int below = 0;
  for (const auto& arg : e.args) below = std::max(below, arg->height);
  e.height = below + 1;
  if (e.height > ast::kMaxExprHeight) throw TooDeep{pos};
}

ast::ExprPtr make_binary(char op, ast::ExprPtr lhs, ast::ExprPtr rhs, ast::Pos op_pos) {
  auto e = std::make_shared<ast::Expr>();
  e->kind = ast::ExprKind::kBinary;
  e->pos = lhs->pos;
  e->op_pos = op_pos;
  e->op = op;
  e->args = {std::move(lhs), std::move(rhs)};
  set_height(*e, op_pos);
  return e;
}

char op_char(const Node& n) {
  if (n.is_type<g::op_add>()) return '+';
  if (n.is_type<g::op_sub>()) return '-';
  if (n.is_type<g::op_mul>()) return '*';
  if (n.is_type<g::op_div>()) return '/';
  if (n.is_type<g::op_mod>()) return '%';
  throw InternalError("internal error: unexpected operator node " + std::string(n.type));
}

bool is_expr_node(const Node& n) {
  return n.is_type<g::number>() || n.is_type<g::name>() || n.is_type<g::call>() ||
         n.is_type<g::negation>() || n.is_type<g::term>() || n.is_type<g::expr>();
}

ast::ExprPtr build_expr(const Node& n) {
  auto e = std::make_shared<ast::Expr>();
  e->pos = pos_of(n);
  if (n.is_type<g::number>()) {
    const std::string text = n.string();
    e->kind = ast::ExprKind::kNumber;
    e->number = std::strtod(text.c_str(), nullptr);
    if (text.find_first_of(".eE") == std::string::npos) {
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), e->integer);
      e->is_integer = ec == std::errc{} && end == text.data() + text.size();
    }
    return e;
  }
  if (n.is_type<g::name>()) {
    e->kind = ast::ExprKind::kName;
    e->name = n.string();
    return e;
  }
  if (n.is_type<g::call>()) {
    e->kind = ast::ExprKind::kCall;
    e->name = n.children.at(0)->string();
    for (size_t i = 1; i < n.children.size(); ++i) e->args.push_back(build_expr(*n.children[i]));
    set_height(*e, e->pos);
    return e;
  }
  if (n.is_type<g::negation>()) {
    e->kind = ast::ExprKind::kNegate;
    e->args.push_back(build_expr(*n.children.at(1)));
    set_height(*e, e->pos);
    return e;
  }
  if (n.is_type<g::term>() || n.is_type<g::expr>()) {
    // children: operand (op operand)*, left-associative
    ast::ExprPtr acc = build_expr(*n.children.at(0));
    for (size_t i = 1; i + 1 < n.children.size(); i += 2) {
      acc = make_binary(op_char(*n.children[i]), acc, build_expr(*n.children[i + 1]),
                        pos_of(*n.children[i]));
    }
    return acc;
  }
  throw InternalError("internal error: unexpected expression node " + std::string(n.type));
}

ast::Selector build_selector(const Node& n);

ast::SelectorItem build_item(const Node& n) {
  ast::SelectorItem item;
  item.pos = pos_of(n);
  if (n.is_type<g::span_ref>()) {
    item.kind = ast::SelectorKind::kSpan;
    item.span = n.children.at(0)->string();
    if (n.children.size() > 1) {
      const Node& idx = *n.children[1];
      ast::Index index;
      index.pos = pos_of(idx);
      if (idx.is_type<g::single_index>()) {
        index.begin = build_expr(*idx.children.at(0));
      } else {
        index.is_range = true;
        for (const auto& c : idx.children) {
          if (c->is_type<g::range_begin>()) index.begin = build_expr(*c->children.at(0));
          if (c->is_type<g::range_end>()) index.end = build_expr(*c->children.at(0));
        }
      }
      item.index = std::move(index);
    }
  } else if (n.is_type<g::before_item>()) {
    item.kind = ast::SelectorKind::kBefore;
    item.items.push_back(build_item(*n.children.at(0)));
  } else if (n.is_type<g::group_item>()) {
    item.kind = ast::SelectorKind::kGroup;
    item.items = build_selector(*n.children.at(0)).items;
  } else {
    throw InternalError("internal error: unexpected selector node " + std::string(n.type));
  }
  return item;
}

// A sel_list node, or a single item node (the operands of pair, align, ...).
ast::Selector build_selector(const Node& n) {
  ast::Selector sel;
  sel.pos = pos_of(n);
  if (n.is_type<g::sel_list>()) {
    for (const auto& c : n.children) sel.items.push_back(build_item(*c));
  } else {
    sel.items.push_back(build_item(n));
  }
  return sel;
}

ast::Shape build_shape(const Node& n) {
  ast::Shape s;
  s.pos = pos_of(n);
  const auto& ch = n.children;
  if (n.is_type<g::directed_shape>()) {
    s.kind = ast::ShapeKind::kDirected;
    s.a = build_selector(*ch.at(0));
    s.b = build_selector(*ch.at(1));
  } else if (n.is_type<g::pair_shape>()) {
    s.kind = ast::ShapeKind::kPair;
    s.a = build_selector(*ch.at(0));
    s.b = build_selector(*ch.at(1));
  } else if (n.is_type<g::clique_shape>() || n.is_type<g::distance_shape>()) {
    s.kind = n.is_type<g::clique_shape>() ? ast::ShapeKind::kClique : ast::ShapeKind::kDistance;
    s.a = build_selector(*ch.at(0));
    s.has_a = true;
  } else if (n.is_type<g::diagonal_shape>() || n.is_type<g::causal_shape>()) {
    s.kind = n.is_type<g::diagonal_shape>() ? ast::ShapeKind::kDiagonal : ast::ShapeKind::kCausal;
    if (!ch.empty()) {
      s.a = build_selector(*ch[0]);
      s.has_a = true;
    }
  } else if (n.is_type<g::cycle_shape>()) {
    s.kind = ast::ShapeKind::kCycle;
    s.a = build_selector(*ch.at(0));
    s.size = build_expr(*ch.at(1));
  } else if (n.is_type<g::align_shape>() || n.is_type<g::product_shape>()) {
    s.kind = n.is_type<g::align_shape>() ? ast::ShapeKind::kAlign : ast::ShapeKind::kProduct;
    s.a = build_selector(*ch.at(0));
    s.b = build_selector(*ch.at(1));
    s.c = build_selector(*ch.at(2));
    // Options come in any order; a repeated option keeps the position of its repetition, where
    // the binder reports it.
    for (size_t i = 3; i < ch.size(); ++i) {
      const Node& opt = *ch[i];
      if (opt.is_type<g::carry>()) {
        s.carry = true;
        s.carry_pos = pos_of(opt);
        ++s.carry_count;
      } else if (opt.is_type<g::lag_option>()) {
        s.lag_pos = pos_of(opt);
        if (s.lag_count++ == 0) s.lag = build_expr(*opt.children.at(0));
      }
    }
  } else if (n.is_type<g::local_shape>()) {
    s.kind = ast::ShapeKind::kLocal;
    s.a = build_selector(*ch.at(0));
    // Options come in any order; a repeated option keeps the position of its repetition, where
    // the checker reports it.
    for (size_t i = 1; i < ch.size(); ++i) {
      const Node& opt = *ch[i];
      if (opt.is_type<g::radius_option>()) {
        s.radius_pos = pos_of(opt);
        if (s.radius_count++ == 0) s.size = build_expr(*opt.children.at(0));
      } else if (opt.is_type<g::metric_option>()) {
        s.metric_pos = pos_of(opt);
        if (s.metric_count++ == 0) {
          s.metric = opt.children.at(0)->is_type<g::kw_manhattan>() ? ast::Metric::kManhattan
                                                                    : ast::Metric::kChebyshev;
        }
      } else if (opt.is_type<g::dilation_option>()) {
        s.dilation_pos = pos_of(opt);
        if (s.dilation_count++ == 0) s.dilation = build_expr(*opt.children.at(0));
      }
    }
  } else if (n.is_type<g::shift_shape>()) {
    s.kind = ast::ShapeKind::kShift;
    s.a = build_selector(*ch.at(0));
    s.dy = build_expr(*ch.at(1));
    s.dx = build_expr(*ch.at(2));
  } else {
    throw InternalError("internal error: unexpected shape node " + std::string(n.type));
  }
  return s;
}

ast::Statement build_statement(const Node& n);

void build_body(const Node& n, size_t first, ast::Statement& block) {
  for (size_t i = first; i < n.children.size(); ++i) {
    block.body.push_back(build_statement(*n.children[i]));
  }
}

ast::Statement build_rule(const Node& n) {
  ast::Statement st;
  st.kind = ast::StatementKind::kRule;
  st.pos = pos_of(n);
  size_t i = 0;
  // skip the leading keyword node (kw_open / kw_close are stored for scale and default)
  while (i < n.children.size() &&
         (n.children[i]->is_type<g::kw_open>() || n.children[i]->is_type<g::kw_close>())) {
    ++i;
  }
  st.shape = build_shape(*n.children.at(i));
  if (n.is_type<g::open_rule>()) st.action = ast::RuleAction::kOpen;
  if (n.is_type<g::close_rule>()) st.action = ast::RuleAction::kClose;
  if (n.is_type<g::set_rule>()) st.action = ast::RuleAction::kSet;
  if (n.is_type<g::hard_rule>()) st.action = ast::RuleAction::kHard;
  if (i + 1 < n.children.size()) {
    const Node& v = *n.children[i + 1];
    st.value = build_expr(v.is_type<g::at_value>() ? *v.children.at(0) : v);
  }
  return st;
}

// A declaration node (`param`, `tokens`, `digits`, `grid`, `scale`, `layers`, `heads`,
// `default`) into `st`; false for any other node.
bool build_declaration(const Node& n, ast::Statement& st) {
  const auto& ch = n.children;
  if (n.is_type<g::param_decl>()) {
    st.kind = ast::StatementKind::kParam;
    st.name = ch.at(0)->string();
    st.name_pos = pos_of(*ch[0]);
    st.value = build_expr(*ch.at(1));
  } else if (n.is_type<g::tokens_decl>()) {
    st.kind = ast::StatementKind::kTokens;
    for (const auto& c : ch) {
      ast::SpanDecl span;
      span.pos = pos_of(*c);
      span.name = c->children.at(0)->string();
      if (c->children.size() > 1) span.length = build_expr(*c->children[1]);
      st.spans.push_back(std::move(span));
    }
  } else if (n.is_type<g::digits_decl>()) {
    st.kind = ast::StatementKind::kDigits;
    st.name = ch.at(0)->string();
    st.name_pos = pos_of(*ch[0]);
    st.lsb_first = ch.at(1)->is_type<g::kw_lsb_first>();
  } else if (n.is_type<g::grid_decl>()) {
    st.kind = ast::StatementKind::kGrid;
    st.name = ch.at(0)->string();
    st.name_pos = pos_of(*ch[0]);
    st.value = build_expr(*ch.at(1));
    st.value2 = build_expr(*ch.at(2));
  } else if (n.is_type<g::scale_decl>()) {
    st.kind = ast::StatementKind::kScale;
    for (const auto& c : ch) {
      ast::ScaleItem item;
      item.pos = pos_of(*c);
      item.is_open = c->children.at(0)->is_type<g::kw_open>();
      item.value = build_expr(*c->children.at(1));
      st.scale.push_back(std::move(item));
    }
  } else if (n.is_type<g::layers_decl>() || n.is_type<g::heads_decl>()) {
    st.kind =
        n.is_type<g::layers_decl>() ? ast::StatementKind::kLayers : ast::StatementKind::kHeads;
    st.value = build_expr(*ch.at(0));
  } else if (n.is_type<g::default_decl>()) {
    st.kind = ast::StatementKind::kDefault;
    const Node& v = *ch.at(0);
    if (v.is_type<g::kw_open>()) {
      st.default_kind = ast::DefaultKind::kOpen;
    } else if (v.is_type<g::kw_close>()) {
      st.default_kind = ast::DefaultKind::kClose;
    } else {
      st.default_kind = ast::DefaultKind::kValue;
      st.value = build_expr(v);
    }
  } else {
    return false;
  }
  return true;
}

ast::Statement build_statement(const Node& n) {
  ast::Statement st;
  st.pos = pos_of(n);
  const auto& ch = n.children;
  if (n.is_type<g::open_rule>() || n.is_type<g::close_rule>() || n.is_type<g::set_rule>() ||
      n.is_type<g::hard_rule>()) {
    return build_rule(n);
  }
  if (build_declaration(n, st)) return st;
  if (n.is_type<g::for_block>()) {
    st.kind = ast::StatementKind::kFor;
    st.name = ch.at(0)->string();
    st.name_pos = pos_of(*ch[0]);
    st.value = build_expr(*ch.at(1));
    st.value2 = build_expr(*ch.at(2));
    build_body(n, 3, st);
  } else if (n.is_type<g::head_block>() || n.is_type<g::layer_block>()) {
    st.kind = n.is_type<g::head_block>() ? ast::StatementKind::kHeadBlock
                                         : ast::StatementKind::kLayerBlock;
    st.value = build_expr(*ch.at(0));
    build_body(n, 1, st);
  } else if (n.is_type<g::heads_block>() || n.is_type<g::layers_block>()) {
    st.kind = n.is_type<g::heads_block>() ? ast::StatementKind::kHeadsBlock
                                          : ast::StatementKind::kLayersBlock;
    st.value = build_expr(*ch.at(0));
    st.value2 = build_expr(*ch.at(1));
    build_body(n, 2, st);
  } else {
    throw InternalError("internal error: unexpected statement node " + std::string(n.type));
  }
  return st;
}

// Where to report a syntax error: at the unexpected token, or, when the file ends first, just
// after its last character, so the caret has a source line to point into.
ast::Pos error_position(const std::string& text, const pegtl::position& p) {
  if (p.byte < text.size()) return ast::Pos{static_cast<int>(p.line), static_cast<int>(p.column)};
  size_t end = text.size();
  while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  ast::Pos pos{1, 1};
  for (size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++pos.line;
      pos.column = 1;
    } else {
      ++pos.column;
    }
  }
  return pos;
}

}  // namespace

ast::Spec parse_spec(const SourceText& source) {
  pegtl::memory_input in(source.text(), source.filename());
  std::unique_ptr<Node> root;
  try {
    root = pegtl::parse_tree::parse<g::spec, tree_selector, depth_limit, g::control>(in);
  } catch (const pegtl::parse_error& e) {
    const pegtl::position& p = e.positions().front();
    source.fail(error_position(source.text(), p), parse_message(e));
  }
  internal_check(root != nullptr, "parse of a spec failed without an error");
  ast::Spec spec;
  const auto& top = root->children;
  internal_check(!top.empty() && top[0]->is_type<g::mask_decl>(), "spec without mask_decl");
  spec.name = top[0]->children.at(0)->string();
  spec.name_pos = pos_of(*top[0]->children[0]);
  try {
    for (size_t i = 1; i < top.size(); ++i) spec.statements.push_back(build_statement(*top[i]));
  } catch (const TooDeep& e) {
    source.fail(e.pos, too_deep_message());
  }
  return spec;
}

ast::ExprPtr parse_define_value(const std::string& origin, const std::string& value) {
  pegtl::memory_input in(value, origin);
  std::unique_ptr<Node> root;
  try {
    root = pegtl::parse_tree::parse<g::define_value, tree_selector, depth_limit, g::control>(in);
  } catch (const pegtl::parse_error& e) {
    throw InputError(fmt::format("{} = {}: {} at column {}", origin, quote_input(value),
                                 parse_message(e), e.positions().front().column));
  }
  internal_check(root != nullptr && root->children.size() == 1, "define parse without a value");
  const Node& n = *root->children[0];
  internal_check(is_expr_node(n), "define value is not an expression");
  try {
    return build_expr(n);
  } catch (const TooDeep& e) {
    throw InputError(
        fmt::format("{}: {} (at column {})", origin, too_deep_message(), e.pos.column));
  }
}

}  // namespace maskprior
