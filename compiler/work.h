// Work limits of one compile: what unrolling and lowering may do, checked before it is done.
#pragma once

#include <cstdint>
#include <functional>

#include "compiler/ast.h"
#include "compiler/source.h"

namespace maskprior {

/// The limits (docs/language.md "Work limits").
constexpr uint64_t kMaxRuleApplications = 1'000'000;
constexpr uint64_t kMaxLoopIterations = 10'000'000;
/// Cell work may reach this many times the cells the size cap allows (max_bytes / 8).
constexpr uint64_t kCellWorkPerCappedCell = 16;
/// What one rule application lists (selector tokens, shape columns) may reach this many times the
/// cells the size cap allows: its lists of 8-byte tokens stay within this multiple of max_bytes.
constexpr uint64_t kListedPerCappedCell = 2;

/// Counts rule applications, loop iterations and cell work against the limits. Cell work is what
/// a rule application lists (tokens its selectors produce, columns its shape lists) and the cells
/// it writes. Each `add_*` is called before the work it counts and throws SpecError at `pos` when
/// a total would pass its limit.
class WorkBudget {
 public:
  /// `max_bytes` is CompileOptions::max_bytes: the cell-work limits are proportional to it;
  /// `check_cancelled` is CompileOptions::check_cancelled, called at each rule application.
  WorkBudget(uint64_t max_bytes, const SourceText& source,
             const std::function<void()>& check_cancelled);

  /// Starts a rule application (its listed work starts at zero); may be cancelled here.
  void add_application(ast::Pos pos);
  void add_iterations(uint64_t count, ast::Pos pos);
  /// Tokens or columns the current rule application lists (held in memory).
  void add_listed(uint64_t count, ast::Pos pos);
  /// Cells the current rule application writes, over all planes it writes.
  void add_written(uint64_t count, ast::Pos pos);

 private:
  const SourceText& source_;
  const std::function<void()>& check_cancelled_;
  uint64_t capped_cells_;  // max_bytes / 8
  uint64_t applications_ = 0;
  uint64_t iterations_ = 0;
  uint64_t cells_ = 0;   // all cell work so far
  uint64_t listed_ = 0;  // listed by the current rule application
};

/// a * b, saturating at UINT64_MAX instead of overflowing (for work counts).
uint64_t saturating_product(uint64_t a, uint64_t b);

}  // namespace maskprior
