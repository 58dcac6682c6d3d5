// Expand pass: unrolls `for` and head/layer blocks and resolves each rule application to concrete
// cells (the rule walk of compiler/walk.h with every value known).
#pragma once

#include <cstdint>
#include <functional>

#include "compiler/ast.h"
#include "compiler/compile_options.h"
#include "compiler/declarations.h"
#include "compiler/source.h"
#include "compiler/walk.h"

namespace maskprior {

/// Runs the rules of `spec` in file order (loops unrolled, blocks applied) and hands each
/// application to `emit`. Throws SpecError for bad ranges, head/layer indexes outside the
/// declared counts, `hard` inside a head/layer block, every selector or shape error, and work past
/// the limits of compiler/work.h (the cell-work limit from `options.max_bytes`), before doing that
/// work. Calls `options.check_cancelled` before each rule application.
void expand_rules(const ast::Spec& spec, const Declarations& decls, const SourceText& source,
                  const CompileOptions& options,
                  const std::function<void(const LoweredRule&)>& emit);

}  // namespace maskprior
