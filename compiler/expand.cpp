#include "compiler/expand.h"

#include "compiler/binding.h"
#include "compiler/work.h"

namespace maskprior {

void expand_rules(const ast::Spec& spec, const Declarations& decls, const SourceText& source,
                  uint64_t max_bytes, const std::function<void(const LoweredRule&)>& emit) {
  WorkBudget budget(max_bytes, source);
  Binding binding(Pass::kExpand, decls, source);
  binding.budget = &budget;
  walk_rules(spec, binding, emit);
}

}  // namespace maskprior
