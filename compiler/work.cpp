#include "compiler/work.h"

#include <fmt/format.h>

#include <limits>

namespace maskprior {

uint64_t saturating_product(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}

WorkBudget::WorkBudget(uint64_t max_bytes, const SourceText& source,
                       const std::function<void()>& check_cancelled)
    : source_(source),
      check_cancelled_(check_cancelled),
      capped_cells_(max_bytes / (sizeof(float) + sizeof(int32_t))) {}

void WorkBudget::add_application(ast::Pos pos) {
  if (check_cancelled_) check_cancelled_();
  if (++applications_ > kMaxRuleApplications) {
    source_.fail(pos, fmt::format("more than {} rule applications after unrolling loops",
                                  kMaxRuleApplications));
  }
  listed_ = 0;
}

void WorkBudget::add_iterations(uint64_t count, ast::Pos pos) {
  if (count > kMaxLoopIterations - iterations_) {
    source_.fail(pos, fmt::format("this loop would take the spec past {} loop iterations "
                                  "({} before it, {} more here)",
                                  kMaxLoopIterations, iterations_, count));
  }
  iterations_ += count;
}

void WorkBudget::add_listed(uint64_t count, ast::Pos pos) {
  const uint64_t limit = saturating_product(capped_cells_, kListedPerCappedCell);
  if (count > limit - listed_) {
    source_.fail(pos, fmt::format("this rule would list more than {} tokens ({} before this "
                                  "item, {} more here): one rule application may list at most {} "
                                  "times the {} cells the size cap allows",
                                  limit, listed_, count, kListedPerCappedCell, capped_cells_));
  }
  listed_ += count;
  add_written(count, pos);
}

void WorkBudget::add_written(uint64_t count, ast::Pos pos) {
  const uint64_t limit = saturating_product(capped_cells_, kCellWorkPerCappedCell);
  if (count > limit - cells_) {
    source_.fail(pos, fmt::format("the spec's cell work would pass its limit of {} ({} before "
                                  "this, {} more here): tokens listed and cells written are "
                                  "limited to {} times the {} cells the size cap allows",
                                  limit, cells_, count, kCellWorkPerCappedCell, capped_cells_));
  }
  cells_ += count;
}

}  // namespace maskprior
