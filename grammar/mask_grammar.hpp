// PEGTL grammar of the .mask language (docs/language-reference.md; decisions in docs/language.md).
//
// Rules only: no semantic code. Every token rule eats the whitespace and comments after it, so
// an error is reported at the first character of the unexpected token. Places where the parser
// commits (`must<...>`) use a rule of their own, with its message in grammar/errors.hpp.
#pragma once

#include <tao/pegtl.hpp>

namespace maskprior::grammar {

namespace pegtl = tao::pegtl;
using pegtl::at;
using pegtl::eof;
using pegtl::eolf;
using pegtl::must;
using pegtl::not_at;
using pegtl::one;
using pegtl::opt;
using pegtl::plus;
using pegtl::seq;
using pegtl::sor;
using pegtl::star;
using pegtl::until;

// ---------------------------------------------------------------------------------------------
// Lexical

// comment ::= '#' { any } eol
struct comment : seq<one<'#'>, until<eolf>> {};
// ws ::= { space | comment }
struct ws : star<sor<pegtl::ascii::space, comment>> {};

// keyword ::= one of the reserved words, not followed by an identifier character
#define MASKPRIOR_KEYWORD(rule_name, text)              \
  struct rule_name##_word : TAO_PEGTL_KEYWORD(text) {}; \
  struct rule_name : seq<rule_name##_word, ws> {}

MASKPRIOR_KEYWORD(kw_mask, "mask");
MASKPRIOR_KEYWORD(kw_param, "param");
MASKPRIOR_KEYWORD(kw_tokens, "tokens");
MASKPRIOR_KEYWORD(kw_digits, "digits");
MASKPRIOR_KEYWORD(kw_lsb_first, "lsb_first");
MASKPRIOR_KEYWORD(kw_msb_first, "msb_first");
MASKPRIOR_KEYWORD(kw_grid, "grid");
MASKPRIOR_KEYWORD(kw_scale, "scale");
MASKPRIOR_KEYWORD(kw_open, "open");
MASKPRIOR_KEYWORD(kw_close, "close");
MASKPRIOR_KEYWORD(kw_set, "set");
MASKPRIOR_KEYWORD(kw_hard, "hard");
MASKPRIOR_KEYWORD(kw_causal, "causal");
MASKPRIOR_KEYWORD(kw_layers, "layers");
MASKPRIOR_KEYWORD(kw_layer, "layer");
MASKPRIOR_KEYWORD(kw_heads, "heads");
MASKPRIOR_KEYWORD(kw_head, "head");
MASKPRIOR_KEYWORD(kw_default, "default");
MASKPRIOR_KEYWORD(kw_pair, "pair");
MASKPRIOR_KEYWORD(kw_clique, "clique");
MASKPRIOR_KEYWORD(kw_diagonal, "diagonal");
MASKPRIOR_KEYWORD(kw_cycle, "cycle");
MASKPRIOR_KEYWORD(kw_window, "window");
MASKPRIOR_KEYWORD(kw_align, "align");
MASKPRIOR_KEYWORD(kw_product, "product");
MASKPRIOR_KEYWORD(kw_carry, "carry");
MASKPRIOR_KEYWORD(kw_local, "local");
MASKPRIOR_KEYWORD(kw_radius, "radius");
MASKPRIOR_KEYWORD(kw_metric, "metric");
MASKPRIOR_KEYWORD(kw_chebyshev, "chebyshev");
MASKPRIOR_KEYWORD(kw_manhattan, "manhattan");
MASKPRIOR_KEYWORD(kw_dilation, "dilation");
MASKPRIOR_KEYWORD(kw_shift, "shift");
MASKPRIOR_KEYWORD(kw_by, "by");
MASKPRIOR_KEYWORD(kw_distance, "distance");
MASKPRIOR_KEYWORD(kw_for, "for");
MASKPRIOR_KEYWORD(kw_in, "in");
MASKPRIOR_KEYWORD(kw_before, "before");
MASKPRIOR_KEYWORD(kw_at, "at");

#undef MASKPRIOR_KEYWORD

// keyword ::= 'mask' | 'param' | ... (every reserved word)
struct keyword
    : sor<kw_mask_word, kw_param_word, kw_tokens_word, kw_digits_word, kw_lsb_first_word,
          kw_msb_first_word, kw_grid_word, kw_scale_word, kw_open_word, kw_close_word, kw_set_word,
          kw_hard_word, kw_causal_word, kw_layers_word, kw_layer_word, kw_heads_word, kw_head_word,
          kw_default_word, kw_pair_word, kw_clique_word, kw_diagonal_word, kw_cycle_word,
          kw_window_word, kw_align_word, kw_product_word, kw_carry_word, kw_local_word,
          kw_radius_word, kw_metric_word, kw_chebyshev_word, kw_manhattan_word, kw_dilation_word,
          kw_shift_word, kw_by_word, kw_distance_word, kw_for_word, kw_in_word, kw_before_word,
          kw_at_word> {};

// identifier ::= [A-Za-z_][A-Za-z0-9_]*
struct identifier : pegtl::identifier {};
// name ::= identifier that is not a keyword
struct name : seq<not_at<keyword>, identifier> {};
struct name_tok : seq<name, ws> {};

// integer ::= digit+
// number ::= integer [ '.' digit+ ] [ ('e' | 'E') ['+' | '-'] digit+ ]
struct integer : plus<pegtl::digit> {};
struct fraction : seq<one<'.'>, plus<pegtl::digit>> {};
struct exponent : seq<one<'e', 'E'>, opt<one<'+', '-'>>, plus<pegtl::digit>> {};
struct number : seq<integer, opt<fraction>, opt<exponent>> {};
struct number_tok : seq<number, ws> {};

// The symbols of selectors, alone; the tokens below add the whitespace after them, and
// grammar/depends_grammar.hpp reads the same symbols with blanks after them.
struct comma_sym : one<','> {};
struct lbracket_sym : one<'['> {};
struct rbracket_sym : one<']'> {};
struct dotdot_sym : pegtl::string<'.', '.'> {};
struct plus_sym : one<'+'> {};
struct minus_sym : one<'-'> {};

// Punctuation. arrow ::= '->'   dotdot ::= '..'
struct comma : seq<comma_sym, ws> {};
struct lparen : seq<one<'('>, ws> {};
struct rparen : seq<one<')'>, ws> {};
struct lbracket : seq<lbracket_sym, ws> {};
struct rbracket : seq<rbracket_sym, ws> {};
struct lbrace : seq<one<'{'>, ws> {};
struct rbrace : seq<one<'}'>, ws> {};
struct equals : seq<one<'='>, ws> {};
struct arrow : seq<pegtl::string<'-', '>'>, ws> {};
struct dotdot : seq<dotdot_sym, ws> {};
// grid_by ::= 'x' (not followed by a letter or '_', so `4x4` and `4 x 4` both read)
struct grid_by : seq<one<'x'>, not_at<sor<pegtl::alpha, one<'_'>>>, ws> {};

// ---------------------------------------------------------------------------------------------
// Expressions

struct expr;

// op_add ::= '+'   op_sub ::= '-' (not '->')   op_mul ::= '*'   op_div ::= '/'   op_mod ::= '%'
struct op_add : seq<plus_sym, ws> {};
struct op_sub : seq<minus_sym, not_at<one<'>'>>, ws> {};
struct op_mul : seq<one<'*'>, ws> {};
struct op_div : seq<one<'/'>, ws> {};
struct op_mod : seq<one<'%'>, ws> {};

// paren_expr ::= '(' expr ')'
struct paren_body : seq<expr> {};
struct paren_close : seq<rparen> {};
struct paren_expr : seq<lparen, must<paren_body>, must<paren_close>> {};

// call ::= name '(' expr { ',' expr } ')'
struct call_arg : seq<expr> {};
struct call_close : seq<rparen> {};
struct call : seq<name, ws, lparen, must<call_arg>, star<comma, must<call_arg>>, must<call_close>> {
};

// primary ::= number | call | name | paren_expr
struct primary : sor<number_tok, call, name_tok, paren_expr> {};

// negation ::= '-' unary
struct unary;
struct negation_operand : seq<unary> {};
struct negation : seq<op_sub, must<negation_operand>> {};
// unary ::= negation | primary
struct unary : sor<negation, primary> {};

// term ::= unary { ('*' | '/' | '%') unary }
struct term_operand : seq<unary> {};
struct term : seq<unary, star<sor<op_mul, op_div, op_mod>, must<term_operand>>> {};

// expr ::= term { ('+' | '-') term }
struct expr_operand : seq<term> {};
struct expr : seq<term, star<sor<op_add, op_sub>, must<expr_operand>>> {};

// ---------------------------------------------------------------------------------------------
// Selectors

// index ::= '[' (range_index | single_index) ']'
// range_index ::= [expr] '..' [expr]     single_index ::= expr
struct range_begin : seq<expr> {};
struct range_end : seq<expr> {};
struct range_index : seq<opt<range_begin>, dotdot, opt<range_end>> {};
struct single_index : seq<expr> {};
struct index_body : sor<range_index, single_index> {};
struct index_close : seq<rbracket> {};
struct index : seq<lbracket, must<index_body>, must<index_close>> {};

struct sel_list;
struct sel_item;
// span_ref ::= name [index]
struct span_ref : seq<name_tok, opt<index>> {};
// before_item ::= 'before' sel_item
struct before_operand : seq<sel_item> {};
struct before_item : seq<kw_before, must<before_operand>> {};
// group_item ::= '(' sel_list ')'
struct group_body : seq<sel_list> {};
struct group_close : seq<rparen> {};
struct group_item : seq<lparen, must<group_body>, must<group_close>> {};
// sel_item ::= before_item | group_item | span_ref
struct sel_item : sor<before_item, group_item, span_ref> {};
// sel_list ::= sel_item { ',' sel_item }
struct list_item : seq<sel_item> {};
struct sel_list : seq<sel_item, star<comma, must<list_item>>> {};

// ---------------------------------------------------------------------------------------------
// Rule shapes

// directed_shape ::= sel_list '->' sel_list
struct directed_arrow : seq<arrow> {};
struct directed_target : seq<sel_list> {};
struct directed_shape : seq<sel_list, must<directed_arrow>, must<directed_target>> {};

// pair_shape ::= 'pair' sel_item ',' sel_item
struct pair_first : seq<sel_item> {};
struct pair_comma : seq<comma> {};
struct pair_second : seq<sel_item> {};
struct pair_shape : seq<kw_pair, must<pair_first>, must<pair_comma>, must<pair_second>> {};

// clique_shape ::= 'clique' sel_list
struct clique_list : seq<sel_list> {};
struct clique_shape : seq<kw_clique, must<clique_list>> {};

// diagonal_shape ::= 'diagonal' [sel_list]
struct diagonal_shape : seq<kw_diagonal, opt<sel_list>> {};

// cycle_shape ::= 'cycle' sel_list 'window' expr
struct cycle_list : seq<sel_list> {};
struct cycle_window_kw : seq<kw_window> {};
struct cycle_window : seq<expr> {};
struct cycle_shape : seq<kw_cycle, must<cycle_list>, must<cycle_window_kw>, must<cycle_window>> {};

// digit_operands ::= sel_item ',' sel_item '->' sel_item { digit_option }   (align and product)
// digit_option ::= 'carry' | 'lag' expr
// `lag` is not reserved: only an option can follow the result span (every statement begins with
// a reserved word), so `lag` stays free as a name.
struct operand_a : seq<sel_item> {};
struct operand_comma : seq<comma> {};
struct operand_b : seq<sel_item> {};
struct operand_arrow : seq<arrow> {};
struct operand_c : seq<sel_item> {};
struct carry : seq<kw_carry> {};
struct lag_word : TAO_PEGTL_KEYWORD("lag") {};
struct lag_value : seq<expr> {};
struct lag_option : seq<lag_word, ws, must<lag_value>> {};
struct digit_option : sor<carry, lag_option> {};
struct digit_operands : seq<must<operand_a>, must<operand_comma>, must<operand_b>,
                            must<operand_arrow>, must<operand_c>, star<digit_option>> {};
// align_shape ::= 'align' digit_operands
struct align_shape : seq<kw_align, digit_operands> {};
// product_shape ::= 'product' digit_operands
struct product_shape : seq<kw_product, digit_operands> {};

// local_option ::= 'radius' expr | 'metric' ('chebyshev' | 'manhattan') | 'dilation' expr
struct radius_value : seq<expr> {};
struct radius_option : seq<kw_radius, must<radius_value>> {};
struct metric_name : sor<kw_chebyshev, kw_manhattan> {};
struct metric_option : seq<kw_metric, must<metric_name>> {};
struct dilation_value : seq<expr> {};
struct dilation_option : seq<kw_dilation, must<dilation_value>> {};
struct local_option : sor<radius_option, metric_option, dilation_option> {};
// local_shape ::= 'local' sel_item local_option { local_option }
struct local_grid : seq<sel_item> {};
struct local_first_option : seq<local_option> {};
struct local_shape : seq<kw_local, must<local_grid>, must<local_first_option>, star<local_option>> {
};

// shift_shape ::= 'shift' sel_item 'by' '(' expr ',' expr ')'
struct shift_grid : seq<sel_item> {};
struct shift_by : seq<kw_by> {};
struct shift_open : seq<lparen> {};
struct shift_dy : seq<expr> {};
struct shift_comma : seq<comma> {};
struct shift_dx : seq<expr> {};
struct shift_close : seq<rparen> {};
struct shift_shape : seq<kw_shift, must<shift_grid>, must<shift_by>, must<shift_open>,
                         must<shift_dy>, must<shift_comma>, must<shift_dx>, must<shift_close>> {};

// distance_shape ::= 'distance' sel_list
struct distance_list : seq<sel_list> {};
struct distance_shape : seq<kw_distance, must<distance_list>> {};

// causal_shape ::= 'causal' [sel_list]      (only after `hard`)
struct causal_shape : seq<kw_causal, opt<sel_list>> {};

// shape ::= pair_shape | clique_shape | diagonal_shape | cycle_shape | align_shape
//         | product_shape | local_shape | shift_shape | distance_shape | directed_shape
struct shape : sor<pair_shape, clique_shape, diagonal_shape, cycle_shape, align_shape,
                   product_shape, local_shape, shift_shape, distance_shape, directed_shape> {};

// ---------------------------------------------------------------------------------------------
// Rules

// at_value ::= 'at' expr
struct at_expr : seq<expr> {};
struct at_value : seq<kw_at, must<at_expr>> {};
// open_rule ::= 'open' shape ['at' expr]
struct open_shape : seq<shape> {};
struct open_rule : seq<kw_open, must<open_shape>, opt<at_value>> {};
// close_rule ::= 'close' shape ['at' expr]
struct close_shape : seq<shape> {};
struct close_rule : seq<kw_close, must<close_shape>, opt<at_value>> {};
// set_rule ::= 'set' shape '=' expr
struct set_shape : seq<shape> {};
struct set_equals : seq<equals> {};
struct set_value : seq<expr> {};
struct set_rule : seq<kw_set, must<set_shape>, must<set_equals>, must<set_value>> {};
// hard_rule ::= 'hard' (causal_shape | shape)
struct hard_shape : sor<causal_shape, shape> {};
struct hard_rule : seq<kw_hard, must<hard_shape>> {};
// rule ::= open_rule | close_rule | set_rule | hard_rule
struct rule : sor<open_rule, close_rule, set_rule, hard_rule> {};

// ---------------------------------------------------------------------------------------------
// Blocks

struct block;
// block_body ::= '{' { rule | block } '}'
struct block_open : seq<lbrace> {};
struct block_close : seq<rbrace> {};
struct block_body : seq<must<block_open>, star<sor<rule, block>>, must<block_close>> {};

// for_block ::= 'for' name 'in' expr '..' expr block_body
struct loop_var : seq<name_tok> {};
struct for_in : seq<kw_in> {};
struct for_begin : seq<expr> {};
struct for_dotdot : seq<dotdot> {};
struct for_end : seq<expr> {};
struct for_block : seq<kw_for, must<loop_var>, must<for_in>, must<for_begin>, must<for_dotdot>,
                       must<for_end>, block_body> {};
// head_block ::= 'head' expr block_body
struct head_index : seq<expr> {};
struct head_block : seq<kw_head, must<head_index>, block_body> {};
// heads_block ::= 'heads' expr '..' expr block_body
struct heads_end : seq<expr> {};
struct heads_block : seq<kw_heads, expr, dotdot, must<heads_end>, block_body> {};
// layer_block ::= 'layer' expr block_body
struct layer_index : seq<expr> {};
struct layer_block : seq<kw_layer, must<layer_index>, block_body> {};
// layers_block ::= 'layers' expr '..' expr block_body
struct layers_end : seq<expr> {};
struct layers_block : seq<kw_layers, expr, dotdot, must<layers_end>, block_body> {};
// block ::= for_block | head_block | heads_block | layer_block | layers_block
struct block : sor<for_block, head_block, heads_block, layer_block, layers_block> {};

// ---------------------------------------------------------------------------------------------
// Declarations

// mask_decl ::= 'mask' identifier     (the spec's label: keywords allowed, e.g. `mask distance`)
struct spec_word : pegtl::identifier {};
struct spec_name : seq<spec_word, ws> {};
struct mask_decl : seq<kw_mask, must<spec_name>> {};
// param_decl ::= 'param' name '=' expr
struct param_name : seq<name_tok> {};
struct param_equals : seq<equals> {};
struct param_value : seq<expr> {};
struct param_decl : seq<kw_param, must<param_name>, must<param_equals>, must<param_value>> {};
// span_decl ::= name ['[' expr ']']
struct span_length : seq<expr> {};
struct span_length_close : seq<rbracket> {};
struct span_decl : seq<name_tok, opt<lbracket, must<span_length>, must<span_length_close>>> {};
// tokens_decl ::= 'tokens' span_decl { ',' span_decl }
struct first_span_decl : seq<span_decl> {};
struct next_span_decl : seq<span_decl> {};
struct tokens_decl : seq<kw_tokens, must<first_span_decl>, star<comma, must<next_span_decl>>> {};
// digits_decl ::= 'digits' name ('lsb_first' | 'msb_first')
struct digits_span : seq<name_tok> {};
struct digit_order : sor<kw_lsb_first, kw_msb_first> {};
struct digits_decl : seq<kw_digits, must<digits_span>, must<digit_order>> {};
// grid_decl ::= 'grid' name expr 'x' expr
struct grid_span : seq<name_tok> {};
struct grid_height : seq<expr> {};
struct grid_times : seq<grid_by> {};
struct grid_width : seq<expr> {};
struct grid_decl
    : seq<kw_grid, must<grid_span>, must<grid_height>, must<grid_times>, must<grid_width>> {};
// scale_item ::= ('open' | 'close') '=' expr
struct scale_equals : seq<equals> {};
struct scale_value : seq<expr> {};
struct scale_item : seq<sor<kw_open, kw_close>, must<scale_equals>, must<scale_value>> {};
// scale_decl ::= 'scale' scale_item { ',' scale_item }
struct first_scale_item : seq<scale_item> {};
struct next_scale_item : seq<scale_item> {};
struct scale_decl : seq<kw_scale, must<first_scale_item>, star<comma, must<next_scale_item>>> {};
// layers_decl ::= 'layers' expr      heads_decl ::= 'heads' expr
struct layers_count : seq<expr> {};
struct layers_decl : seq<kw_layers, must<layers_count>> {};
struct heads_count : seq<expr> {};
struct heads_decl : seq<kw_heads, must<heads_count>> {};
// default_decl ::= 'default' ('open' | 'close' | expr)
struct default_value : sor<kw_open, kw_close, expr> {};
struct default_decl : seq<kw_default, must<default_value>> {};

// ---------------------------------------------------------------------------------------------
// The file

// statement ::= param_decl | tokens_decl | digits_decl | grid_decl | scale_decl | layers_block
//             | layers_decl | heads_block | heads_decl | default_decl | rule | for_block
//             | head_block | layer_block
struct statement
    : sor<param_decl, tokens_decl, digits_decl, grid_decl, scale_decl, layers_block, layers_decl,
          heads_block, heads_decl, default_decl, rule, for_block, head_block, layer_block> {};
// spec ::= ws mask_decl { statement } eof
struct first_statement : seq<mask_decl> {};
struct end_of_spec : eof {};
struct spec : seq<ws, must<first_statement>, star<statement>, must<end_of_spec>> {};

// define_value ::= ws expr eof      (the VALUE of `-D NAME=VALUE`)
struct define_expr : seq<expr> {};
struct define_end : eof {};
struct define_value : seq<ws, must<define_expr>, must<define_end>> {};

}  // namespace maskprior::grammar
