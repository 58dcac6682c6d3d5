// Declarations pass: params (with -D overrides), layout, digits, grids, scale, shape, default.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ast.h"
#include "compiler/compile_options.h"
#include "compiler/eval.h"
#include "compiler/source.h"
#include "core/layout.h"

namespace maskprior {

/// Everything the declarations of a spec fix before its rules run.
struct Declarations {
  std::string name;
  Scope params;  // resolved parameter values (after -D)
  Layout layout;
  std::unordered_map<std::string, size_t> span_index;  // span name -> its index in layout.spans
  std::vector<ast::Pos> span_pos;                      // where each span of `layout` is declared
  ast::Pos tokens_pos;  // the `tokens` statement (or `mask NAME` if missing)
  bool has_tokens = false;
  int64_t layers = 1;
  int64_t heads = 1;
  double open_value = 10.0;    // after --open
  double close_value = -10.0;  // after --close
  double default_value = -10.0;
  size_t first_rule = 0;  // index in Spec::statements of the first rule or block
  bool has_hard = false;  // the spec has a `hard` rule (anywhere)
};

/// Resolves the declarations of `spec` in file order. Throws SpecError for unknown or duplicate
/// names, bad sizes, grids that do not cover their span, declarations after the first rule;
/// InputError for a -D naming no parameter or a --digits naming no span (CompileOptions).
Declarations resolve_declarations(const ast::Spec& spec, const SourceText& source,
                                  const CompileOptions& options);

/// The span called `name`; throws SpecError at `pos` naming the declared spans if there is none
/// (Layout::unknown_span).
const Span& find_span(const std::string& name, ast::Pos pos, const Declarations& decls,
                      const SourceText& source);

}  // namespace maskprior
