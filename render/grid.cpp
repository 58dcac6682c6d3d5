#include "render/grid.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>
#include <vector>

#include "core/cells.h"
#include "core/error.h"

namespace maskprior {
namespace {

constexpr const char* kPanelGap = "   ";  // between side-by-side grids
constexpr size_t kMaxListedValues = 4;    // "other" values listed one by one in the legend

/// The symbol of a cell of class kOther: the sign of its value.
char other_symbol(float value) {
  if (value > 0) return '+';
  if (value < 0) return '-';
  return '0';
}

/// The grid symbol of a cell of class `cell` holding `value`.
char symbol(CellClass cell, float value) {
  switch (cell) {
    case CellClass::kOpen:
      return '#';
    case CellClass::kClosed:
      return '.';
    case CellClass::kHard:
      return 'x';
    case CellClass::kOther:
      return other_symbol(value);
  }
  return '?';
}

/// Cell counts of one (layer, head) and the range of its non-hard values.
struct HeadStats {
  int64_t open = 0, closed = 0, other = 0, hard = 0;
  bool has_positive = false, has_negative = false, has_zero = false;
  float min = 0, max = 0;
  std::set<float> other_values;  // at most kMaxListedValues + 1 kept
};

/// Counts an "other" cell holding `v`.
void add_other(HeadStats& s, float v) {
  ++s.other;
  const char sign = other_symbol(v);
  s.has_positive |= sign == '+';
  s.has_negative |= sign == '-';
  s.has_zero |= sign == '0';
  if (s.other_values.size() <= kMaxListedValues) s.other_values.insert(v);
}

HeadStats head_stats(const CompiledMask& m, int64_t layer, int64_t head) {
  HeadStats s;
  bool any = false;
  for (int64_t q = 0; q < m.n; ++q) {
    for (int64_t k = 0; k < m.n; ++k) {
      const CellClass cell = classify_cell(m, layer, head, q, k);
      if (cell == CellClass::kHard) {
        ++s.hard;
        continue;
      }
      const float v = m.at(layer, head, q, k);
      s.min = any ? std::min(s.min, v) : v;
      s.max = any ? std::max(s.max, v) : v;
      any = true;
      if (cell == CellClass::kOpen) {
        ++s.open;
      } else if (cell == CellClass::kClosed) {
        ++s.closed;
      } else {
        add_other(s, v);
      }
    }
  }
  return s;
}

/// The label of token `t`, control characters escaped: a tensor file's span names are input.
std::string label(const CompiledMask& m, int64_t t) {
  return escape_control_chars(m.layout.token_label(t));
}

std::string plural(int64_t count, const char* noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

std::string layout_with_offsets(const Layout& layout) {
  std::vector<std::string> spans;
  for (const Span& s : layout.spans) {
    const std::string name = escape_control_chars(s.name);
    std::string text = s.length == 1 ? fmt::format("{} @{}", name, s.offset)
                                     : fmt::format("{}[{}] @{}..{}", name, s.length, s.offset,
                                                   s.offset + s.length - 1);
    if (s.grid) text += fmt::format(" grid {}x{}", s.grid->first, s.grid->second);
    if (s.digits) text += s.digits == DigitOrder::kLsbFirst ? " lsb_first" : " msb_first";
    spans.push_back(std::move(text));
  }
  return fmt::format("{}", fmt::join(spans, ", "));
}

std::string legend(const CompiledMask& m, const HeadStats& s) {
  std::string out = fmt::format("legend: # open ({})  . closed ({})", m.open_value, m.close_value);
  if (s.other > 0) {
    std::string values;
    if (s.other_values.size() <= kMaxListedValues) {
      values = fmt::format(" = {}", fmt::join(s.other_values, ", "));
    }
    std::vector<std::string> symbols;
    if (s.has_positive) symbols.push_back("+ > 0");
    if (s.has_negative) symbols.push_back("- < 0");
    if (s.has_zero) symbols.push_back("0 = 0");
    out += fmt::format("  other values{} ({})", values, fmt::join(symbols, ", "));
  }
  out += "  x hard-excluded";
  return out;
}

/// Column labels written vertically, one character per line, top-aligned.
/// Column labels written downwards, one column per key, repeated over `panels` side-by-side grids.
std::string column_header(const CompiledMask& m, size_t label_width, size_t panels) {
  std::vector<std::string> labels;
  size_t height = 0;
  for (int64_t k = 0; k < m.n; ++k) {
    labels.push_back(label(m, k));
    height = std::max(height, labels.back().size());
  }
  std::string out;
  for (size_t line = 0; line < height; ++line) {
    std::string text(label_width + 1, ' ');
    for (size_t panel = 0; panel < panels; ++panel) {
      if (panel > 0) text += kPanelGap;
      for (const std::string& label : labels) {
        text += ' ';
        text += line < label.size() ? label[line] : ' ';
      }
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + '\n';
  }
  return out;
}

/// Side-by-side text grids of `m`'s cells with token labels on both sides, one symbol per cell
/// from each panel's `cell(q, k)`.
std::string labelled_panels(const CompiledMask& m,
                            const std::vector<std::function<char(int64_t, int64_t)>>& panels) {
  size_t label_width = 0;
  for (int64_t t = 0; t < m.n; ++t) label_width = std::max(label_width, label(m, t).size());
  std::string out = column_header(m, label_width, panels.size());
  for (int64_t q = 0; q < m.n; ++q) {
    out += fmt::format("{:>{}} ", label(m, q), label_width);
    for (size_t panel = 0; panel < panels.size(); ++panel) {
      if (panel > 0) out += kPanelGap;
      for (int64_t k = 0; k < m.n; ++k) {
        out += ' ';
        out += panels[panel](q, k);
      }
    }
    out += '\n';
  }
  return out;
}

/// The text grid of `m`'s cells with token labels on both sides, one symbol per cell from
/// `cell(q, k)`.
std::string labelled_grid(const CompiledMask& m,
                          const std::function<char(int64_t, int64_t)>& cell) {
  return labelled_panels(m, {cell});
}

/// What a grid of N > max_tokens says instead.
std::string too_large_for_text(int64_t n, int64_t max_tokens) {
  return fmt::format(
      "N = {} is too large to draw as text (at most {} tokens); use --png FILE.png for a "
      "heatmap\n",
      n, max_tokens);
}

}  // namespace

void check_layer_head(const CompiledMask& mask, int64_t layer, int64_t head) {
  if (layer < 0 || layer >= mask.layers) {
    throw InputError(fmt::format("layer {} is out of range: mask '{}' has {} (0..{})", layer,
                                 escape_control_chars(mask.name), plural(mask.layers, "layer"),
                                 mask.layers - 1));
  }
  if (head < 0 || head >= mask.heads) {
    throw InputError(fmt::format("head {} is out of range: mask '{}' has {} (0..{})", head,
                                 escape_control_chars(mask.name), plural(mask.heads, "head"),
                                 mask.heads - 1));
  }
}

std::string render_summary(const CompiledMask& mask, int64_t layer, int64_t head) {
  check_layer_head(mask, layer, head);
  const HeadStats s = head_stats(mask, layer, head);
  std::string out =
      fmt::format("mask {}: {}, {}, N = {}; layer {}, head {} (rows = query, columns = key)\n",
                  escape_control_chars(mask.name), plural(mask.layers, "layer"),
                  plural(mask.heads, "head"), mask.n, layer, head);
  out += fmt::format("layout: {}\n", layout_with_offsets(mask.layout));
  out += fmt::format("cells: {} open, {} closed, {} other, {} hard-excluded", s.open, s.closed,
                     s.other, s.hard);
  if (s.open + s.closed + s.other > 0) out += fmt::format("; values {} to {}", s.min, s.max);
  out += '\n';
  return out;
}

std::string render_grid(const CompiledMask& mask, int64_t layer, int64_t head, int64_t max_tokens) {
  std::string out = render_summary(mask, layer, head);
  if (mask.n > max_tokens) return out + too_large_for_text(mask.n, max_tokens);
  out += legend(mask, head_stats(mask, layer, head)) + "\n\n";
  return out + labelled_grid(mask, [&](int64_t q, int64_t k) {
           return symbol(classify_cell(mask, layer, head, q, k), mask.at(layer, head, q, k));
         });
}

std::string render_query_row(const CompiledMask& mask, int64_t layer, int64_t head,
                             const std::string& query) {
  check_layer_head(mask, layer, head);
  const std::optional<int64_t> q = mask.layout.token_index(query);
  if (!q) {
    throw InputError(fmt::format("--query {}: no such token in mask '{}' (its layout: {})",
                                 quote_input(query), escape_control_chars(mask.name),
                                 layout_with_offsets(mask.layout)));
  }
  auto cell = [&](int64_t k) {
    return k == *q ? '@'
                   : symbol(classify_cell(mask, layer, head, *q, k), mask.at(layer, head, *q, k));
  };
  std::string out = fmt::format(
      "mask {}: layer {}, head {}; the keys that query {} (token {}) reads, laid out as the "
      "layout is\n{}\n",
      escape_control_chars(mask.name), layer, head, label(mask, *q), *q,
      legend(mask, head_stats(mask, layer, head)) + "  @ the query itself");
  for (const Span& span : mask.layout.spans) {
    const std::string name = escape_control_chars(span.name);
    if (!span.grid) {
      out += fmt::format("{}:", name);
      for (int64_t k = span.offset; k < span.offset + span.length; ++k) {
        out += ' ';
        out += cell(k);
      }
      out += '\n';
      continue;
    }
    const auto [rows, columns] = *span.grid;
    out += fmt::format("{} ({} x {} grid):\n", name, rows, columns);
    for (int64_t r = 0; r < rows; ++r) {
      out += ' ';
      for (int64_t c = 0; c < columns; ++c) {
        out += ' ';
        out += cell(span.offset + r * columns + c);
      }
      out += '\n';
    }
  }
  return out;
}

namespace {

/// InputError unless `a` and `b` have one layout and their layers and heads fit as `fits` says
/// (`rule` says how, in the message).
void check_comparable(const CompiledMask& a, const CompiledMask& b,
                      const std::function<bool(int64_t, int64_t)>& fits, const char* rule) {
  if (same_spans(a.layout, b.layout) && a.n == b.n && fits(a.layers, b.layers) &&
      fits(a.heads, b.heads)) {
    return;
  }
  throw InputError(fmt::format(
      "cannot compare mask '{}' ({} × {}, N = {}: {}) with '{}' ({} × {}, N = {}: {}): the "
      "layouts must be the same, and {}",
      escape_control_chars(a.name), plural(a.layers, "layer"), plural(a.heads, "head"), a.n,
      layout_with_offsets(a.layout), escape_control_chars(b.name), plural(b.layers, "layer"),
      plural(b.heads, "head"), b.n, layout_with_offsets(b.layout), rule));
}

/// both / open in either; 1 when neither opens a cell.
double jaccard(const PatternDiff::Plane& plane) {
  const int64_t either = plane.only_a + plane.only_b + plane.both;
  return either == 0 ? 1.0 : static_cast<double>(plane.both) / static_cast<double>(either);
}

}  // namespace

PatternDiff::Plane PatternDiff::total() const {
  Plane sum;
  for (const Plane& plane : planes) {
    sum.only_a += plane.only_a;
    sum.only_b += plane.only_b;
    sum.both += plane.both;
  }
  sum.jaccard = jaccard(sum);
  return sum;
}

CompiledMask mask_difference(const CompiledMask& init, const CompiledMask& learned) {
  check_comparable(
      init, learned, [](int64_t a, int64_t b) { return a == b || a == 1; },
      "the first must have the second's layers and heads, or one");
  CompiledMask difference = learned;
  difference.provenance.clear();
  for (int64_t l = 0; l < learned.layers; ++l) {
    for (int64_t h = 0; h < learned.heads; ++h) {
      for (int64_t q = 0; q < learned.n; ++q) {
        for (int64_t k = 0; k < learned.n; ++k) {
          difference.mask[learned.index(l, h, q, k)] =
              learned.at(l, h, q, k) -
              init.at(init.layers == 1 ? 0 : l, init.heads == 1 ? 0 : h, q, k);
        }
      }
    }
  }
  if (init.hard) {
    if (!difference.hard) difference.hard.emplace(init.hard->size(), uint8_t{0});
    for (size_t i = 0; i < init.hard->size(); ++i) (*difference.hard)[i] |= (*init.hard)[i];
  }
  return difference;
}

std::string render_difference(const CompiledMask& difference, int64_t layer, int64_t head,
                              double tolerance, int64_t max_tokens) {
  check_layer_head(difference, layer, head);
  int64_t rose = 0, fell = 0, cells = 0;
  double largest = 0, total = 0;
  for (int64_t q = 0; q < difference.n; ++q) {
    for (int64_t k = 0; k < difference.n; ++k) {
      if (difference.is_hard(q, k)) continue;
      const double d = difference.at(layer, head, q, k);
      rose += d > tolerance;
      fell += d < -tolerance;
      largest = std::max(largest, std::abs(d));
      total += std::abs(d);
      ++cells;
    }
  }
  std::string out = fmt::format(
      "difference (learned − init) of mask {}, N = {}; layer {}, head {} (rows = query, columns = "
      "key)\nlayout: {}\ncells: {} rose, {} fell, {} within ±{}; largest |Δ| {:.4g}, mean |Δ| "
      "{:.4g}\n",
      escape_control_chars(difference.name), difference.n, layer, head,
      layout_with_offsets(difference.layout), rose, fell, cells - rose - fell, tolerance, largest,
      cells > 0 ? total / static_cast<double>(cells) : 0.0);
  if (difference.n > max_tokens) return out + too_large_for_text(difference.n, max_tokens);
  out += fmt::format("legend: + rose  - fell  . within ±{}  x hard-excluded\n\n", tolerance);
  return out + labelled_grid(difference, [&](int64_t q, int64_t k) {
           const double d = difference.at(layer, head, q, k);
           return difference.is_hard(q, k) ? 'x' : d > tolerance ? '+' : d < -tolerance ? '-' : '.';
         });
}

PatternDiff compare_patterns(const CompiledMask& a, const CompiledMask& b) {
  check_comparable(
      a, b, [](int64_t x, int64_t y) { return x == y || x == 1 || y == 1; },
      "the layers and heads too (or one of either)");
  const std::vector<uint8_t> open_a = open_pattern(a), open_b = open_pattern(b);
  PatternDiff diff;
  CompiledMask& cells = diff.cells;
  cells.name = a.name + " vs " + b.name;
  cells.layout = a.layout;
  cells.n = a.n;
  cells.layers = std::max(a.layers, b.layers);
  cells.heads = std::max(a.heads, b.heads);
  cells.open_value = 1;
  cells.close_value = -1;
  cells.mask.assign(static_cast<size_t>(cells.layers * cells.heads * cells.n * cells.n), 0.0F);
  if (a.hard || b.hard) {
    cells.hard.emplace(static_cast<size_t>(a.n * a.n), uint8_t{0});
    for (const CompiledMask* m : {&a, &b}) {
      if (!m->hard) continue;
      for (size_t i = 0; i < m->hard->size(); ++i) (*cells.hard)[i] |= (*m->hard)[i];
    }
  }
  // A causal decoder's last row predicts no token: what it opens is counted nowhere.
  diff.counted_rows = cells.n > 1 && is_causal(cells) ? cells.n - 1 : cells.n;
  for (int64_t l = 0; l < cells.layers; ++l) {
    for (int64_t h = 0; h < cells.heads; ++h) {
      PatternDiff::Plane plane{l, h, 0, 0, 0, 1.0};
      for (int64_t q = 0; q < diff.counted_rows; ++q) {
        for (int64_t k = 0; k < cells.n; ++k) {
          if (cells.is_hard(q, k)) continue;
          const bool in_a = open_a[a.index(a.layers == 1 ? 0 : l, a.heads == 1 ? 0 : h, q, k)] != 0;
          const bool in_b = open_b[b.index(b.layers == 1 ? 0 : l, b.heads == 1 ? 0 : h, q, k)] != 0;
          plane.only_a += in_a && !in_b;
          plane.only_b += in_b && !in_a;
          plane.both += in_a && in_b;
          cells.mask[cells.index(l, h, q, k)] = in_a && in_b ? 0.5F
                                                : in_a       ? 1.0F
                                                : in_b       ? -1.0F
                                                             : 0.0F;
        }
      }
      plane.jaccard = jaccard(plane);
      diff.planes.push_back(plane);
    }
  }
  return diff;
}

std::string render_pattern_diff(const PatternDiff& diff, const std::string& name_a,
                                const std::string& name_b, int64_t max_tokens) {
  std::string out = fmt::format("A = {}\nB = {}\n\n{:>5} {:>4} {:>9} {:>9} {:>9} {:>8}\n", name_a,
                                name_b, "layer", "head", "only A", "only B", "both", "Jaccard");
  for (const PatternDiff::Plane& p : diff.planes) {
    out += fmt::format("{:>5} {:>4} {:>9} {:>9} {:>9} {:>8.3f}\n", p.layer, p.head, p.only_a,
                       p.only_b, p.both, p.jaccard);
  }
  out += fmt::format(
      "(cells open in A only, in B only, in both; Jaccard = both / open in either; hard cells "
      "left out{})\n",
      diff.counted_rows < diff.cells.n
          ? ", and the causal decoder's last row, which predicts no token"
          : "");
  const CompiledMask& m = diff.cells;
  if (m.n > max_tokens) return out + "\n" + too_large_for_text(m.n, max_tokens);
  auto value = [&](const PatternDiff::Plane& p, int64_t q, int64_t k) {
    return m.at(p.layer, p.head, q, k);
  };
  for (const PatternDiff::Plane& p : diff.planes) {
    auto panel = [&](auto open) {
      return [&, open](int64_t q, int64_t k) {
        return m.is_hard(q, k) ? 'x' : open(value(p, q, k)) ? '#' : '.';
      };
    };
    out += fmt::format(
        "\nlayer {}, head {}: A, B, and the difference (# open in both, a only in A, b only in "
        "B, . closed in both, x hard)\n",
        p.layer, p.head);
    out += labelled_panels(
        m, {panel([](float v) { return v > 0; }), panel([](float v) { return v == 0.5F || v < 0; }),
            [&](int64_t q, int64_t k) {
              const float v = value(p, q, k);
              return m.is_hard(q, k) ? 'x' : v == 0.5F ? '#' : v > 0 ? 'a' : v < 0 ? 'b' : '.';
            }});
  }
  return out;
}

}  // namespace maskprior
