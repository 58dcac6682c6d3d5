#include "compiler/expand.h"

#include "compiler/binding.h"
#include "compiler/work.h"

namespace maskprior {

void expand_rules(const ast::Spec& spec, const Declarations& decls, const SourceText& source,
                  const CompileOptions& options,
                  const std::function<void(const LoweredRule&)>& emit) {
  WorkBudget budget(options.max_bytes, source, options.check_cancelled);
  Binding binding(Pass::kExpand, decls, source);
  binding.budget = &budget;
  walk_rules(spec, binding, emit);
}

}  // namespace maskprior
