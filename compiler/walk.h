// The statement walk the two rule passes share: the rules after the declarations, in file order,
// with loops, head/layer blocks and each rule's operands handled by one piece of code. What a
// pass does differently (compiler/binding.h) is what it knows: the resolve pass walks every loop
// body once without its variable's value, the expand pass unrolls.
#pragma once

#include <cstdint>
#include <functional>

#include "compiler/ast.h"
#include "compiler/binding.h"
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

/// Walks the rules of `spec` in `binding`'s pass. Every pass checks where each rule stands
/// (`hard` outside head/layer blocks, `distance` only with `set`), loop variables that hide a
/// name, and loop and block ranges it knows, and binds each rule's shape (compiler/shapes.h).
/// Resolving: each loop body once, also when the loop runs zero times; a block's planes are
/// checked against the enclosing blocks while none depends on a loop variable. Expanding: loops
/// unrolled (iterations and applications counted by `binding.budget`), each application's cells
/// generated and handed to `emit`. Throws SpecError at the first error.
void walk_rules(const ast::Spec& spec, Binding& binding,
                const std::function<void(const LoweredRule&)>& emit);

}  // namespace maskprior
