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

/// Runs the rules of `spec` in file order (loops unrolled, blocks applied) and hands each
/// application to `emit`. Throws SpecError for bad ranges, head/layer indexes outside the
/// declared counts, `hard` inside a head/layer block and every selector or shape error.
void expand_rules(const ast::Spec& spec, const Declarations& decls, const SourceText& source,
                  const std::function<void(const LoweredRule&)>& emit);

}  // namespace maskprior
