// PEGTL grammar of declared dependencies, the text of `maskc validate --depends` (its syntax and
// meaning in validate/declared_depends.h): `c[i]: a[..i+1], eq; c[0]:`.
//
// Rules only, built from the lexemes of grammar/mask_grammar.hpp (identifier, integer, `[`, `]`,
// `..`, `,`, `+`, `-`), so a selector is spelt as in a .mask spec. Every token eats the blanks
// after it (spaces, tabs, newlines; no comments), so an error stands at the first character of the
// unexpected token. No rule refers to itself, directly or not: how deep the parser goes does not
// depend on the text. Each place where the parser commits (`must<...>`) has its message below;
// validate/declared_depends.cpp, which builds the declarations, fills in the names the message
// quotes.
#pragma once

#include <tao/pegtl.hpp>

#include "grammar/mask_grammar.hpp"

namespace maskprior::grammar::depends {

// blanks ::= { space }
struct blanks : star<pegtl::ascii::space> {};

// Tokens: a lexeme of mask_grammar.hpp and the blanks after it.
struct comma_tok : seq<comma_sym, blanks> {};
struct plus_tok : seq<plus_sym, blanks> {};
struct minus_tok : seq<minus_sym, blanks> {};
struct semicolon : seq<one<';'>, blanks> {};

// index ::= term { ('+' | '-') term }      term ::= INT | NAME (the output's index)
struct term_integer : integer {};
struct term_name : identifier {};
struct term : sor<seq<term_integer, blanks>, seq<term_name, blanks>> {};
struct index : seq<must<term>, star<sor<plus_tok, minus_tok>, must<term>>> {};

// selector ::= SPAN ['[' (index | [index] '..' [index]) ']']
// The indices of a range are its first and its last index; `a[..y]` opens with open_range.
struct selector_span : identifier {};
struct selector_open : seq<lbracket_sym, blanks> {};
struct first_index : index {};
struct last_index : index {};
struct open_range : seq<dotdot_sym, blanks> {};
struct range_dots : seq<dotdot_sym, blanks> {};
struct range_end : sor<at<rbracket_sym>, last_index> {};
struct selector_body
    : sor<seq<open_range, range_end>, seq<first_index, opt<range_dots, range_end>>> {};
struct selector_close : seq<rbracket_sym, blanks> {};
struct selector
    : seq<selector_span, blanks, opt<selector_open, selector_body, must<selector_close>>> {};

// output ::= SPAN ['[' (NAME | INT) ']']
struct output_span : identifier {};
struct output_variable : identifier {};
struct output_integer : integer {};
struct output_open : seq<lbracket_sym, blanks> {};
struct output_index : sor<seq<output_variable, blanks>, seq<output_integer, blanks>> {};
struct output_close : seq<rbracket_sym, blanks> {};
struct output : seq<output_span, blanks, opt<output_open, must<output_index>, must<output_close>>> {
};

// declaration ::= output ':' [selector {',' selector}]      (no selector: a constant)
struct output_colon : seq<one<':'>, blanks> {};
struct selectors : seq<must<selector>, star<comma_tok, must<selector>>> {};
struct declaration : seq<must<output>, must<output_colon>, sor<at<one<';'>>, eof, selectors>> {};

// depends ::= declaration {';' declaration} [';']
struct some_declaration : not_at<eof> {};
struct next_declaration : sor<eof, declaration> {};
struct end_of_text : eof {};
struct text : seq<blanks, must<some_declaration>, declaration, star<semicolon, next_declaration>,
                  must<end_of_text>> {};

// The message of every rule under `must<>`, with the names it quotes in braces: {found} what
// stands where the parse stopped (`'x'` or "the end"), {output} the declaration's output as
// written, {span} the span of the selector being read, {after} the last selector read.
template <typename Rule>
inline constexpr const char* error_message = nullptr;

// clang-format off
template <> inline constexpr auto error_message<some_declaration> = "no declaration: write OUTPUT: INPUTS, as in `c[i]: a[..i+1]`";
template <> inline constexpr auto error_message<output> = "expected an output, a span of the spec as in `c[i]`, found {found}";
template <> inline constexpr auto error_message<output_index> = "expected a name (c[i]: every token of c) or a number (c[2]) in the output's brackets, found {found}";
template <> inline constexpr auto error_message<output_close> = "expected ']' after the output's index, found {found}";
template <> inline constexpr auto error_message<output_colon> = "expected ':' after the output {output}, found {found}";
template <> inline constexpr auto error_message<selector> = "expected an input, a span of the spec as in `a[i]`, found {found}";
template <> inline constexpr auto error_message<term> = "expected a number or the output's index in an index, found {found}";
template <> inline constexpr auto error_message<selector_close> = "expected ']' to close {span}[, found {found}";
template <> inline constexpr auto error_message<end_of_text> = "expected ',' or ';' after {after}, found {found}";
// clang-format on

}  // namespace maskprior::grammar::depends
