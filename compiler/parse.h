// Parsing: .mask text -> syntax tree (grammar/ rules, PEGTL parse tree, then ast::Spec).
#pragma once

#include <string>

#include "compiler/ast.h"
#include "compiler/source.h"

namespace maskprior {

/// Parses a whole spec. Throws SpecError (file:line:col, what was expected) on a syntax error.
ast::Spec parse_spec(const SourceText& source);

/// Parses the VALUE of `-D NAME=VALUE` as an expression. Throws InputError naming the define as
/// `origin` says (define_origin: `-D NAME`, or Python's `params['NAME']`).
ast::ExprPtr parse_define_value(const std::string& origin, const std::string& value);

}  // namespace maskprior
