// Rule expansion: unrolls `for` and head/layer blocks and resolves each rule to concrete cells.
#pragma once

#include <cstdint>
#include <functional>

#include "compiler/ast.h"
#include "compiler/declarations.h"
#include "compiler/shapes.h"

namespace maskprior {

/// A half-open range of layers or heads.
struct IndexRange {
  int64_t begin = 0;
  int64_t end = 0;
};

/// One application of a rule: what it writes, where, with which value and provenance line.
struct LoweredRule {
  const ast::Statement* statement = nullptr;
  ast::RuleAction action = ast::RuleAction::kOpen;
  float value = 0.0f;  // unused for hard rules and per-cell values
  int32_t line = 0;    // provenance: the rule's 1-based source line
  IndexRange layers;
  IndexRange heads;
  CellWrites cells;
};

/// Throws SpecError for a rule that cannot stand where it is: `hard` inside the head/layer block
/// `restricting_block` (null outside any), `open distance` / `close distance`.
void check_rule_placement(const ast::Statement& rule, const ast::Statement* restricting_block,
                          const SourceText& source);

/// Throws SpecError when `for` statement `st` names its variable like a name of `scope`.
void check_loop_variable(const ast::Statement& st, const Scope& scope, const SourceText& source);

/// The half-open range of `for` statement `st`; throws SpecError for a reversed range.
IndexRange loop_range(const ast::Statement& st, const Scope& scope, const SourceText& source);

/// The layers or heads that head/layer block `st` names; throws SpecError outside the declared
/// count or for an empty range.
IndexRange block_range(const ast::Statement& st, const Scope& scope, const Declarations& decls,
                       const SourceText& source);

/// `inner` within the enclosing block's `outer`; throws SpecError at block `st` if disjoint.
IndexRange intersect_blocks(IndexRange outer, IndexRange inner, const ast::Statement& st,
                            const SourceText& source);

/// Runs the rules of `spec` in file order (loops unrolled, blocks applied) and hands each
/// application to `emit`. Throws SpecError for bad ranges, head/layer indexes outside the
/// declared counts, `hard` inside a head/layer block, every selector or shape error, and work past
/// the limits of compiler/work.h (the cell-work limit from `max_bytes`), before doing that work.
void expand_rules(const ast::Spec& spec, const Declarations& decls, const SourceText& source,
                  uint64_t max_bytes, const std::function<void(const LoweredRule&)>& emit);

}  // namespace maskprior
