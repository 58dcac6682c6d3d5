#include "compiler/shapes.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <unordered_map>

namespace maskprior {
namespace {

using TokenList = std::vector<int64_t>;
using RunList = std::vector<ColumnRun>;
using SharedRuns = std::shared_ptr<const RunList>;

// Sorted, duplicate-free runs covering `tokens`.
RunList to_runs(TokenList tokens) {
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  RunList runs;
  for (int64_t t : tokens) {
    if (!runs.empty() && runs.back().end == t) {
      ++runs.back().end;
    } else {
      runs.push_back(ColumnRun{t, t + 1});
    }
  }
  return runs;
}

// Sorted, duplicate-free runs covering the tokens of `tokens`, without listing them.
RunList to_runs(BoundSelector tokens) {
  std::sort(tokens.begin(), tokens.end(),
            [](const TokenRun& x, const TokenRun& y) { return x.begin < y.begin; });
  RunList runs;
  for (const TokenRun& run : tokens) {
    if (run.begin == run.end) continue;
    if (!runs.empty() && runs.back().end >= run.begin) {
      runs.back().end = std::max(runs.back().end, run.end);
    } else {
      runs.push_back(run);
    }
  }
  return runs;
}

uint64_t cells_in(const RunList& runs) {
  uint64_t cells = 0;
  for (const ColumnRun& run : runs) cells += static_cast<uint64_t>(run.end - run.begin);
  return cells;
}

// A list of tokens in place order, cut into pieces of consecutive tokens: place p of a piece is
// token first_token + (p - first_place). Lets `causal` and `distance` emit runs per row.
struct Piece {
  int64_t first_place = 0;
  int64_t first_token = 0;
  int64_t length = 0;
};

std::vector<Piece> to_pieces(const TokenList& tokens) {
  std::vector<Piece> pieces;
  for (size_t p = 0; p < tokens.size(); ++p) {
    Piece* last = pieces.empty() ? nullptr : &pieces.back();
    if (last != nullptr && last->first_token + last->length == tokens[p]) {
      ++last->length;
    } else {
      pieces.push_back(Piece{static_cast<int64_t>(p), tokens[p], 1});
    }
  }
  return pieces;
}

// Collects blocks (rows x shared column list) and single cells, then gives each distinct row one
// run list. A row in a single block keeps pointing at that block's runs, so `clique x` over a
// long span stores one list, not N copies.
class CellWritesBuilder {
 public:
  // Every row of `rows` -> every column of `cols` (sorted, duplicate-free runs).
  void add_block(const TokenList& rows, RunList cols) {
    if (rows.empty() || cols.empty()) return;
    const int id = intern(std::move(cols));
    for (int64_t r : rows) add_list(r, id);
  }
  void add_cell(int64_t row, int64_t col) { entries_[row].cells.push_back(col); }

  CellWrites build() && {
    CellWrites out;
    out.rows.reserve(entries_.size());
    for (const auto& [row, entry] : entries_) out.rows.push_back(row);
    std::sort(out.rows.begin(), out.rows.end());
    auto row_runs = std::make_shared<std::vector<SharedRuns>>();
    row_runs->reserve(out.rows.size());
    for (int64_t row : out.rows) {
      Entry& e = entries_[row];
      if (e.lists.size() == 1 && e.cells.empty()) {
        row_runs->push_back(lists_[static_cast<size_t>(e.lists[0])]);
        out.cell_count += list_cells_[static_cast<size_t>(e.lists[0])];
        continue;
      }
      TokenList tokens = std::move(e.cells);
      for (int id : e.lists) {
        for (const ColumnRun& run : *lists_[static_cast<size_t>(id)]) {
          for (int64_t t = run.begin; t < run.end; ++t) tokens.push_back(t);
        }
      }
      row_runs->push_back(std::make_shared<const RunList>(to_runs(std::move(tokens))));
      out.cell_count += cells_in(*row_runs->back());
    }
    out.fill = [row_runs](size_t r, RunList& runs, std::vector<float>&) {
      const RunList& list = *(*row_runs)[r];
      runs.insert(runs.end(), list.begin(), list.end());
    };
    return out;
  }

 private:
  struct Entry {
    std::vector<int> lists;
    TokenList cells;
  };
  // Equal lists share one id, so `pair x, x` keeps one list per row instead of merging copies.
  int intern(RunList runs) {
    size_t hash = runs.size();
    for (const ColumnRun& r : runs) {
      hash = (hash * 1000003u) ^ static_cast<size_t>(r.begin);
      hash = (hash * 1000003u) ^ static_cast<size_t>(r.end);
    }
    std::vector<int>& bucket = by_hash_[hash];
    for (int id : bucket) {
      const RunList& other = *lists_[static_cast<size_t>(id)];
      const bool same = std::equal(other.begin(), other.end(), runs.begin(), runs.end(),
                                   [](const ColumnRun& x, const ColumnRun& y) {
                                     return x.begin == y.begin && x.end == y.end;
                                   });
      if (same) return id;
    }
    list_cells_.push_back(cells_in(runs));
    lists_.push_back(std::make_shared<const RunList>(std::move(runs)));
    bucket.push_back(static_cast<int>(lists_.size() - 1));
    return bucket.back();
  }
  void add_list(int64_t row, int id) {
    std::vector<int>& ids = entries_[row].lists;
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }

  std::vector<SharedRuns> lists_;
  std::vector<uint64_t> list_cells_;  // the cells of each list
  std::unordered_map<size_t, std::vector<int>> by_hash_;
  std::unordered_map<int64_t, Entry> entries_;
};

// ---------------------------------------------------------------------------------------------
// Binding: the operands of a shape, checked in the order written.

// Rows must be distinct for shapes whose cells depend on a token's place in the list. Only the
// expand pass checks it (the resolve pass checks names, spans and indices).
void require_distinct(const std::optional<BoundSelector>& tokens, const ast::Selector& sel,
                      const Binding& b, const char* shape) {
  if (b.resolving() || !tokens) return;
  const std::optional<int64_t> repeated = repeated_token(*tokens);
  if (repeated) {
    b.source.fail(sel.pos, fmt::format("`{}` needs distinct tokens, but {} appears twice", shape,
                                       b.decls.layout.token_label(*repeated)));
  }
}

// The selector of diagonal and causal, or every token of the layout when none is written.
std::optional<BoundSelector> tokens_or_all(const ast::Shape& shape, const Binding& b) {
  if (shape.has_a) return bind_selector(shape.a, b);
  const int64_t n = b.decls.layout.size();
  b.count_listed(static_cast<uint64_t>(n), shape.pos);
  return BoundSelector{TokenRun{0, n}};
}

// A whole-span operand of align or product: a span with a digit order.
SpanOperand digit_operand(const ast::Selector& sel, const Binding& b, const std::string& role,
                          const char* shape) {
  const SpanOperand op = resolve_span_operand(sel, b.decls, b.source, role);
  const Span& span = *op.span;
  if (!span.digits) {
    b.source.fail(sel.pos, fmt::format("`{}` needs the digit order of span {}; expected a "
                                       "declaration `digits {} lsb_first` or `digits {} msb_first`",
                                       shape, span.name, span.name, span.name));
  }
  return op;
}

const Span& grid_span(const ast::Shape& shape, const Binding& b, const char* name) {
  const SpanOperand op = resolve_span_operand(shape.a, b.decls, b.source, "the grid span");
  if (op.shift != 0) {
    b.source.fail(shape.a.pos, fmt::format("`{}` takes a grid span, not `before`", name));
  }
  if (!op.span->grid) {
    b.source.fail(shape.a.pos, fmt::format("`{}` needs a grid on span {}; expected a declaration "
                                           "`grid {} H x W`",
                                           name, op.span->name, op.span->name));
  }
  return *op.span;
}

// `radius` is required; each option at most once.
void check_local_options(const ast::Shape& shape, const SourceText& source) {
  if (shape.radius_count == 0) source.fail(shape.pos, "`local` needs `radius R`");
  if (shape.radius_count > 1) source.fail(shape.radius_pos, "`radius` is given twice");
  if (shape.metric_count > 1) source.fail(shape.metric_pos, "`metric` is given twice");
  if (shape.dilation_count > 1) source.fail(shape.dilation_pos, "`dilation` is given twice");
}

void bind_cycle(const ast::Shape& shape, const Binding& b, BoundShape& out) {
  out.a = bind_selector(shape.a, b);
  out.size = b.integer(*shape.size, "the window");
  if (!out.a || !out.size) return;
  const int64_t m = static_cast<int64_t>(token_count(*out.a));
  const int64_t k = *out.size;
  if (k < 1) b.source.fail(shape.size->pos, fmt::format("window {} must be at least 1", k));
  if (k > m) {
    b.source.fail(shape.size->pos,
                  fmt::format("window {} is longer than the {} tokens of the cycle", k, m));
  }
}

// align and product: three digit spans; `carry` and `lag` each at most once, the lag in
// 0 .. (places of the result) - 1.
void bind_digits(const ast::Shape& shape, const Binding& b, BoundShape& out) {
  const char* name = shape.kind == ast::ShapeKind::kAlign ? "align" : "product";
  out.digits_a = digit_operand(shape.a, b, "the first operand", name);
  out.digits_b = digit_operand(shape.b, b, "the second operand", name);
  out.digits_c = digit_operand(shape.c, b, "the result", name);
  if (shape.carry_count > 1) b.source.fail(shape.carry_pos, "`carry` is given twice");
  if (shape.lag_count > 1) b.source.fail(shape.lag_pos, "`lag` is given twice");
  out.lag = 0;
  if (!shape.lag) return;
  out.lag = b.integer(*shape.lag, "the lag");
  const int64_t places = out.digits_c.span->length;
  if (out.lag && (*out.lag < 0 || *out.lag >= places)) {
    b.source.fail(shape.lag->pos,
                  fmt::format("lag {} must be in 0..{}: the result {} has {} place{}", *out.lag,
                              places - 1, out.digits_c.span->name, places, places == 1 ? "" : "s"));
  }
}

void bind_local(const ast::Shape& shape, const Binding& b, BoundShape& out) {
  out.grid = &grid_span(shape, b, "local");
  check_local_options(shape, b.source);
  out.size = b.integer(*shape.size, "the radius");
  if (out.size && *out.size < 0) {
    b.source.fail(shape.size->pos, fmt::format("radius {} must be at least 0", *out.size));
  }
  out.dilation = 1;
  if (shape.dilation) {
    out.dilation = b.integer(*shape.dilation, "the dilation");
    if (out.dilation && *out.dilation < 1) {
      b.source.fail(shape.dilation->pos,
                    fmt::format("dilation {} must be at least 1", *out.dilation));
    }
  }
}

void bind_distance(const ast::Shape& shape, const ast::Expr* value, Binding& b, BoundShape& out) {
  if (value == nullptr) {
    b.source.fail(shape.pos,
                  "`distance` gives each cell its own value; expected "
                  "`set distance X = EXPR(d)`");
  }
  out.a = bind_selector(shape.a, b);
  require_distinct(out.a, shape.a, b, "distance");
  const int64_t m = out.a ? static_cast<int64_t>(token_count(*out.a)) : 0;
  // The value depends only on d = i - j in [-(m-1), m-1]: evaluate each d once.
  b.count_listed(static_cast<uint64_t>(2 * m), shape.pos);
  // `d` shadows a parameter or loop variable of that name while the value is read
  const auto [slot, added] = b.scope.emplace("d", Value{});
  const Value shadowed = slot->second;
  if (b.resolving()) {
    b.check_names(*value);
  } else {
    auto table = std::make_shared<std::vector<float>>();
    for (int64_t d = -(m - 1); d <= m - 1; ++d) {
      slot->second = Value::of_integer(d);
      table->push_back(static_cast<float>(evaluate(*value, b.scope, b.source).real));
    }
    out.distance_values = std::move(table);
  }
  if (added) {
    b.scope.erase(slot);
  } else {
    slot->second = shadowed;
  }
}

// ---------------------------------------------------------------------------------------------
// Cells: generated from a bound shape.

// The tokens of a digit span by place: place 0 is the least significant digit.
TokenList digits_by_place(const SpanOperand& op) {
  const Span& span = *op.span;
  TokenList places(static_cast<size_t>(span.length));
  for (int64_t j = 0; j < span.length; ++j) {
    const int64_t index = *span.digits == DigitOrder::kLsbFirst ? j : span.length - 1 - j;
    places[static_cast<size_t>(j)] = span.offset + index - op.shift;
  }
  return places;
}

// Adds row -> places[lo..hi] (inclusive; nothing when lo > hi).
void add_places(CellWritesBuilder& builder, int64_t row, const TokenList& places, int64_t lo,
                int64_t hi) {
  for (int64_t i = std::max<int64_t>(lo, 0); i <= hi; ++i) {
    builder.add_cell(row, places[static_cast<size_t>(i)]);
  }
}

CellWrites digit_cells(const BoundShape& bound, WorkBudget& budget) {
  const ast::Shape& shape = *bound.shape;
  const TokenList a = digits_by_place(bound.digits_a);
  const TokenList b = digits_by_place(bound.digits_b);
  const TokenList c = digits_by_place(bound.digits_c);
  const int64_t la = static_cast<int64_t>(a.size());
  const int64_t lb = static_cast<int64_t>(b.size());
  // each row lists at most every place of A and of B
  budget.add_listed(saturating_product(c.size(), a.size() + b.size()), shape.pos);
  CellWritesBuilder builder;
  const int64_t lag = bound.lag.value_or(0);
  // With `lag h`, the row of C[p] gets the operand places of C[p - h]; rows with p < h get none.
  for (int64_t p = lag; p < static_cast<int64_t>(c.size()); ++p) {
    const int64_t row = c[static_cast<size_t>(p)];
    const int64_t j = p - lag;
    if (shape.kind == ast::ShapeKind::kAlign) {
      // C[j] -> A[j], B[j]; with carry also every lower place i < j.
      const int64_t lowest = shape.carry ? 0 : j;
      add_places(builder, row, a, lowest, std::min(j, la - 1));
      add_places(builder, row, b, lowest, std::min(j, lb - 1));
    } else if (shape.carry) {
      // C[j] -> A[i], B[k] for every i + k <= j: every i <= j (with k = 0), every k <= j.
      add_places(builder, row, a, 0, std::min(j, la - 1));
      add_places(builder, row, b, 0, std::min(j, lb - 1));
    } else {
      // C[j] -> A[i], B[k] for every i + k = j: A[i] when B has place j - i, and the reverse.
      add_places(builder, row, a, j - (lb - 1), std::min(j, la - 1));
      add_places(builder, row, b, j - (la - 1), std::min(j, lb - 1));
    }
  }
  return std::move(builder).build();
}

// Sets `out.cell_count` by generating every row's runs once; each run generated counts as cell
// work (a row of `local` takes O(grid height + runs), so the pass is proportional to the output).
void count_lazy_cells(CellWrites& out, const ast::Shape& shape, WorkBudget& budget) {
  RunList runs;
  std::vector<float> values;
  for (size_t r = 0; r < out.rows.size(); ++r) {
    runs.clear();
    out.fill(r, runs, values);
    budget.add_written(runs.size(), shape.pos);
    out.cell_count += cells_in(runs);
  }
}

CellWrites local_cells(const BoundShape& bound, WorkBudget& budget) {
  const Span& span = *bound.grid;
  const int64_t radius = *bound.size;
  const int64_t dilation = *bound.dilation;
  const bool manhattan = bound.shape->metric == ast::Metric::kManhattan;
  // named copies, not a structured binding: the lambda below captures them
  const int64_t height = span.grid->first;
  const int64_t width = span.grid->second;
  const int64_t offset = span.offset;
  const int64_t reach = std::min(radius, std::max(height, width)) / dilation * dilation;

  CellWrites out;
  out.rows.resize(static_cast<size_t>(span.length));
  for (int64_t t = 0; t < span.length; ++t) out.rows[static_cast<size_t>(t)] = offset + t;
  // (p,q) -> (p+dy, q+dx) for offsets that are multiples of the dilation within the radius.
  out.fill = [=](size_t r, RunList& runs, std::vector<float>&) {
    const int64_t p = static_cast<int64_t>(r) / width;
    const int64_t q = static_cast<int64_t>(r) % width;
    for (int64_t dy = -reach; dy <= reach; dy += dilation) {
      const int64_t pp = p + dy;
      if (pp < 0 || pp >= height) continue;
      const int64_t left = manhattan ? reach - std::abs(dy) : reach;
      const int64_t row_offset = offset + pp * width;
      if (dilation == 1) {
        const int64_t lo = std::max<int64_t>(0, q - left);
        const int64_t hi = std::min<int64_t>(width - 1, q + left);
        runs.push_back(ColumnRun{row_offset + lo, row_offset + hi + 1});
        continue;
      }
      for (int64_t dx = -(left / dilation) * dilation; dx <= left; dx += dilation) {
        const int64_t qq = q + dx;
        if (qq >= 0 && qq < width) runs.push_back(ColumnRun{row_offset + qq, row_offset + qq + 1});
      }
    }
  };
  count_lazy_cells(out, *bound.shape, budget);
  return out;
}

CellWrites shift_cells(const BoundShape& bound, WorkBudget& budget) {
  const Span& span = *bound.grid;
  const int64_t dy = *bound.dy;
  const int64_t dx = *bound.dx;
  const auto [height, width] = *span.grid;
  CellWritesBuilder builder;
  // an offset as large as the grid moves every cell off it (and p + dy could overflow)
  if (dy <= -height || dy >= height || dx <= -width || dx >= width) {
    return std::move(builder).build();
  }
  budget.add_listed(static_cast<uint64_t>(span.length), bound.shape->pos);
  for (int64_t p = 0; p < height; ++p) {
    for (int64_t q = 0; q < width; ++q) {
      const int64_t pp = p + dy;
      const int64_t qq = q + dx;
      if (pp < 0 || pp >= height || qq < 0 || qq >= width) continue;
      builder.add_cell(span.offset + p * width + q, span.offset + pp * width + qq);
    }
  }
  return std::move(builder).build();
}

CellWrites cycle_cells(const BoundShape& bound, WorkBudget& budget) {
  const TokenList x = list_tokens(*bound.a);
  const int64_t m = static_cast<int64_t>(x.size());
  const int64_t k = *bound.size;
  CellWritesBuilder builder;
  if (2 * k - 1 >= m) {
    // every window reaches all the way round: each token of the cycle meets every other
    builder.add_block(x, to_runs(*bound.a));
    return std::move(builder).build();
  }
  // each token of the cycle lists the 2k - 1 tokens around it
  budget.add_listed(saturating_product(static_cast<uint64_t>(m), static_cast<uint64_t>(2 * k - 1)),
                    bound.shape->pos);
  // X[a] and X[b] share a window iff their cyclic distance is below k.
  for (int64_t a = 0; a < m; ++a) {
    TokenList cols;
    for (int64_t t = -(k - 1); t <= k - 1; ++t) {
      cols.push_back(x[static_cast<size_t>(((a + t) % m + m) % m)]);
    }
    builder.add_block({x[static_cast<size_t>(a)]}, to_runs(std::move(cols)));
  }
  return std::move(builder).build();
}

// rows = the tokens of `places` sorted; place_of[r] = the place of rows[r] in `places`.
void rows_by_token(const TokenList& places, CellWrites& out, std::vector<int64_t>& place_of) {
  std::vector<int64_t> order(places.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::sort(order.begin(), order.end(), [&](int64_t l, int64_t r) {
    return places[static_cast<size_t>(l)] < places[static_cast<size_t>(r)];
  });
  for (int64_t i : order) out.rows.push_back(places[static_cast<size_t>(i)]);
  place_of = std::move(order);
}

CellWrites distance_cells(const BoundShape& bound) {
  const TokenList x = list_tokens(*bound.a);
  const int64_t m = static_cast<int64_t>(x.size());
  std::shared_ptr<const std::vector<float>> table = bound.distance_values;
  CellWrites out;
  out.per_cell_values = true;
  out.cell_count = saturating_product(static_cast<uint64_t>(m), static_cast<uint64_t>(m));
  auto place_of = std::make_shared<std::vector<int64_t>>();
  rows_by_token(x, out, *place_of);
  auto pieces = std::make_shared<const std::vector<Piece>>(to_pieces(x));
  // Row X[i] gets X[j] with value f(i - j) for every j.
  out.fill = [table, place_of, pieces, m](size_t r, RunList& runs, std::vector<float>& values) {
    const int64_t i = (*place_of)[r];
    for (const Piece& piece : *pieces) {
      runs.push_back(ColumnRun{piece.first_token, piece.first_token + piece.length});
      const float* f = table->data() + (i - piece.first_place + m - 1);
      for (int64_t t = 0; t < piece.length; ++t) values.push_back(f[-t]);
    }
  };
  return out;
}

CellWrites causal_cells(const BoundShape& bound) {
  const TokenList x = list_tokens(*bound.a);
  CellWrites out;
  out.cell_count = saturating_product(x.size(), x.size() - (x.empty() ? 0 : 1)) / 2;
  auto place_of = std::make_shared<std::vector<int64_t>>();
  rows_by_token(x, out, *place_of);
  auto pieces = std::make_shared<const std::vector<Piece>>(to_pieces(x));
  // X[i] -> X[j] for every later place j > i.
  out.fill = [place_of, pieces](size_t r, RunList& runs, std::vector<float>&) {
    const int64_t first = (*place_of)[r] + 1;
    for (const Piece& piece : *pieces) {
      const int64_t end = piece.first_place + piece.length;
      if (end <= first) continue;
      const int64_t skip = std::max<int64_t>(0, first - piece.first_place);
      runs.push_back(ColumnRun{piece.first_token + skip, piece.first_token + piece.length});
    }
  };
  return out;
}

}  // namespace

BoundShape bind_shape(const ast::Shape& shape, const ast::Expr* distance_value, Binding& binding) {
  BoundShape out;
  out.shape = &shape;
  switch (shape.kind) {
    case ast::ShapeKind::kDirected:
    case ast::ShapeKind::kPair:
      // A before B (function arguments would be bound in an unspecified order)
      out.a = bind_selector(shape.a, binding);
      out.b = bind_selector(shape.b, binding);
      break;
    case ast::ShapeKind::kClique:
      out.a = bind_selector(shape.a, binding);
      break;
    case ast::ShapeKind::kDiagonal:
      out.a = tokens_or_all(shape, binding);
      break;
    case ast::ShapeKind::kCausal:
      out.a = tokens_or_all(shape, binding);
      if (shape.has_a) require_distinct(out.a, shape.a, binding, "causal");
      break;
    case ast::ShapeKind::kCycle:
      bind_cycle(shape, binding, out);
      break;
    case ast::ShapeKind::kAlign:
    case ast::ShapeKind::kProduct:
      bind_digits(shape, binding, out);
      break;
    case ast::ShapeKind::kLocal:
      bind_local(shape, binding, out);
      break;
    case ast::ShapeKind::kShift:
      out.grid = &grid_span(shape, binding, "shift");
      out.dy = binding.integer(*shape.dy, "the row offset dy");
      out.dx = binding.integer(*shape.dx, "the column offset dx");
      break;
    case ast::ShapeKind::kDistance:
      bind_distance(shape, distance_value, binding, out);
      break;
  }
  return out;
}

CellWrites shape_cells(const BoundShape& bound, WorkBudget& budget) {
  CellWritesBuilder builder;
  switch (bound.shape->kind) {
    case ast::ShapeKind::kDirected:
      builder.add_block(list_tokens(*bound.a), to_runs(*bound.b));
      break;
    case ast::ShapeKind::kPair: {
      builder.add_block(list_tokens(*bound.a), to_runs(*bound.b));
      builder.add_block(list_tokens(*bound.b), to_runs(*bound.a));
      break;
    }
    case ast::ShapeKind::kClique:
      builder.add_block(list_tokens(*bound.a), to_runs(*bound.a));
      break;
    case ast::ShapeKind::kDiagonal:
      for (const TokenRun& run : *bound.a) {
        for (int64_t t = run.begin; t < run.end; ++t) builder.add_cell(t, t);
      }
      break;
    case ast::ShapeKind::kCycle:
      return cycle_cells(bound, budget);
    case ast::ShapeKind::kAlign:
    case ast::ShapeKind::kProduct:
      return digit_cells(bound, budget);
    case ast::ShapeKind::kLocal:
      return local_cells(bound, budget);
    case ast::ShapeKind::kShift:
      return shift_cells(bound, budget);
    case ast::ShapeKind::kDistance:
      return distance_cells(bound);
    case ast::ShapeKind::kCausal:
      return causal_cells(bound);
  }
  return std::move(builder).build();
}

}  // namespace maskprior
