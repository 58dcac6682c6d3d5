#include "compiler/lower.h"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>

#include <algorithm>
#include <atomic>
#include <limits>

#include "core/text.h"

namespace maskprior {
namespace {

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}

uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}

}  // namespace

uint64_t output_bytes(const Declarations& decls, bool provenance) {
  const auto n = static_cast<uint64_t>(decls.layout.size());
  const uint64_t square = saturating_mul(n, n);
  const uint64_t cells = saturating_mul(
      saturating_mul(static_cast<uint64_t>(decls.layers), static_cast<uint64_t>(decls.heads)),
      square);
  const uint64_t bytes =
      saturating_mul(cells, sizeof(float) + (provenance ? sizeof(int32_t) : uint64_t{0}));
  return decls.has_hard ? saturating_add(bytes, square) : bytes;
}

void check_output_size(const Declarations& decls, const SourceText& source, uint64_t max_bytes,
                       bool provenance) {
  const uint64_t bytes = output_bytes(decls, provenance);
  if (bytes > max_bytes) {
    source.fail(decls.tokens_pos,
                fmt::format("the compiled mask needs {} ({} layers x {} heads x {} x {} cells of "
                            "float32 mask{}{}), above the limit of {}",
                            human_bytes(bytes), decls.layers, decls.heads, decls.layout.size(),
                            decls.layout.size(), provenance ? " and int32 provenance" : "",
                            decls.has_hard ? ", plus the hard mask" : "", human_bytes(max_bytes)));
  }
}

void allocate_mask(CompiledMask& out, const Declarations& decls, bool provenance) {
  out.layers = decls.layers;
  out.heads = decls.heads;
  out.n = decls.layout.size();
  const size_t total = static_cast<size_t>(out.layers * out.heads * out.n * out.n);
  const auto value = static_cast<float>(decls.default_value);
  // A std::vector is written once by its constructor (there is no uninitialised resize), so the
  // two arrays are built side by side rather than one pass after another.
  tbb::parallel_invoke(
      [&] {
        allocate_or_throw(total * sizeof(float), "the mask M",
                          [&] { out.mask.assign(total, value); });
      },
      [&] {
        if (!provenance) return;
        allocate_or_throw(total * sizeof(int32_t), "the provenance tensor",
                          [&] { out.provenance.assign(total, 0); });
      });
  if (decls.has_hard) {
    const auto cells = static_cast<size_t>(out.n * out.n);
    allocate_or_throw(cells, "the hard mask", [&] { out.hard.emplace(cells, uint8_t{0}); });
  }
}

bool apply_rule(const LoweredRule& rule, CompiledMask& out, HardRowPositions& hard_rows,
                WrittenColumns& written) {
  const CellWrites& cells = rule.cells;
  const bool is_hard = rule.action == ast::RuleAction::kHard;
  internal_check(!is_hard || out.hard.has_value(), "hard rule without a hard mask");
  const int64_t n = out.n;
  const ast::Pos rule_pos = rule.statement->pos;
  const bool with_provenance = !out.provenance.empty();
  std::atomic<bool> wrote{false};
  tbb::parallel_for(tbb::blocked_range<size_t>(0, cells.rows.size()),
                    [&](const tbb::blocked_range<size_t>& range) {
                      std::vector<ColumnRun> runs;
                      std::vector<float> values;
                      bool any = false;
                      for (size_t r = range.begin(); r != range.end(); ++r) {
                        runs.clear();
                        values.clear();
                        cells.fill(r, runs, values);
                        if (runs.empty()) continue;
                        any = true;
                        const int64_t q = cells.rows[r];
                        if (is_hard) {
                          uint8_t* row = out.hard->data() + q * n;
                          for (const ColumnRun& run : runs)
                            std::fill(row + run.begin, row + run.end, uint8_t{1});
                          hard_rows[static_cast<size_t>(q)] = rule_pos;
                          continue;
                        }
                        written[static_cast<size_t>(q)] = runs.back().begin;
                        for (int64_t l = rule.layers.begin; l < rule.layers.end; ++l) {
                          for (int64_t h = rule.heads.begin; h < rule.heads.end; ++h) {
                            const size_t base = out.index(l, h, q, 0);
                            float* mask = out.mask.data() + base;
                            int32_t* provenance =
                                with_provenance ? out.provenance.data() + base : nullptr;
                            const float* value = values.data();
                            for (const ColumnRun& run : runs) {
                              if (cells.per_cell_values) {
                                std::copy(value, value + (run.end - run.begin), mask + run.begin);
                                value += run.end - run.begin;
                              } else {
                                std::fill(mask + run.begin, mask + run.end, rule.value);
                              }
                              if (provenance != nullptr) {
                                std::fill(provenance + run.begin, provenance + run.end, rule.line);
                              }
                            }
                          }
                        }
                      }
                      if (any) wrote.store(true, std::memory_order_relaxed);
                    });
  return wrote.load();
}

}  // namespace maskprior
