// Resolve pass: checks the names, spans and loop-independent indices of every rule once, before
// loops are unrolled, so that the body of a loop that never runs is checked too.
#pragma once

#include "compiler/ast.h"
#include "compiler/declarations.h"
#include "compiler/source.h"

namespace maskprior {

/// Checks every rule of `spec` (run or not) against `decls`; throws SpecError at the first error.
void resolve_rules(const ast::Spec& spec, const Declarations& decls, const SourceText& source);

}  // namespace maskprior
