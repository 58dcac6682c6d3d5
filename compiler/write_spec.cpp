#include "compiler/write_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <utility>

#include "compiler/compile.h"
#include "core/cells.h"
#include "core/compiled_mask.h"
#include "core/error.h"

namespace maskprior {
namespace {

using Cell = std::pair<int64_t, int64_t>;  // (query, key)

/// One plane of the draft: which cells must open and which may (hard cells: either way).
struct Plane {
  int64_t n = 0;
  std::vector<uint8_t> open;  // [N, N]
  const std::vector<uint8_t>* hard = nullptr;
  bool hard_at(int64_t q, int64_t k) const {
    return hard != nullptr && (*hard)[static_cast<size_t>(q * n + k)] != 0;
  }
  bool wanted(int64_t q, int64_t k) const {
    return open[static_cast<size_t>(q * n + k)] != 0 && !hard_at(q, k);
  }
  bool allowed(int64_t q, int64_t k) const { return wanted(q, k) || hard_at(q, k); }
};

/// A rule the writer may use, and the cells it opens.
struct Candidate {
  std::string text;
  std::vector<Cell> cells;
};

std::string format_value(double value) {
  return fmt::format("{}", value);
}

/// `tokens ...`, `digits`, `grid`, `layers`, `heads`, `scale`: the declarations of the draft.
std::string declarations(const SpecDraft& draft) {
  std::string out = fmt::format("tokens {}\n", tokens_text(draft.layout));
  for (const Span& s : draft.layout.spans) {
    if (s.digits) out += fmt::format("digits {} {}\n", s.name, digit_order_keyword(*s.digits));
    if (s.grid) out += fmt::format("grid {} {} x {}\n", s.name, s.grid->first, s.grid->second);
  }
  if (draft.layers > 1) out += fmt::format("layers {}\n", draft.layers);
  if (draft.heads > 1) out += fmt::format("heads {}\n", draft.heads);
  out += fmt::format("scale open = {}, close = {}\n", format_value(draft.open_value),
                     format_value(draft.close_value));
  return out;
}

/// The cells that spec text `rule` opens on a one-plane spec of the draft's layout (the compiler
/// decides what a shape means, so the writer cannot disagree with it).
std::vector<Cell> cells_of(const std::string& header, const std::string& rule, int64_t n) {
  CompileOptions options;
  options.provenance = false;
  const CompiledMask mask =
      compile_source(header + "default close\n" + rule + "\n", "<rule>", options);
  std::vector<Cell> cells;
  for (int64_t q = 0; q < n; ++q) {
    for (int64_t k = 0; k < n; ++k) {
      if (leans_open(mask, mask.at(0, 0, q, k))) cells.emplace_back(q, k);
    }
  }
  return cells;
}

/// A selector item for one span's tokens [first, last] (indices within the span).
std::string span_item(const Span& span, int64_t first, int64_t last) {
  if (first == 0 && last == span.length - 1) return span.name;
  if (first == last) return fmt::format("{}[{}]", span.name, first);
  return fmt::format("{}[{}..{}]", span.name, first, last + 1);
}

/// A selector list naming exactly `tokens` (sorted, distinct): whole spans and index ranges.
std::string token_list(const Layout& layout, const std::vector<int64_t>& tokens) {
  std::vector<std::string> items;
  size_t i = 0;
  for (const Span& span : layout.spans) {
    while (i < tokens.size() && tokens[i] < span.offset + span.length) {
      const int64_t first = tokens[i] - span.offset;
      int64_t last = first;
      while (i + 1 < tokens.size() && tokens[i + 1] == span.offset + last + 1 &&
             last + 1 < span.length) {
        ++last;
        ++i;
      }
      items.push_back(span_item(span, first, last));
      ++i;
    }
  }
  return fmt::format("{}", fmt::join(items, ", "));
}

/// Rows and key sets as `KEYWORD ROWS -> KEYS` lines: rows with the same keys share one line.
std::vector<std::string> explicit_rules(const Layout& layout, const std::vector<Cell>& cells,
                                        const std::string& keyword) {
  std::map<int64_t, std::vector<int64_t>> keys_of_row;
  for (const auto& [q, k] : cells) keys_of_row[q].push_back(k);
  std::map<std::vector<int64_t>, std::vector<int64_t>> rows_of_keys;  // ordered: deterministic
  std::vector<std::vector<int64_t>> order;
  for (auto& [q, keys] : keys_of_row) {
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    auto [it, inserted] = rows_of_keys.try_emplace(keys);
    if (inserted) order.push_back(keys);
    it->second.push_back(q);
  }
  std::vector<std::string> lines;
  for (const auto& keys : order) {
    lines.push_back(fmt::format("{} {} -> {}", keyword, token_list(layout, rows_of_keys[keys]),
                                token_list(layout, keys)));
  }
  return lines;
}

/// Named token groups a rule may use whole: each span, and the tokens before each span.
std::vector<std::pair<std::string, std::vector<int64_t>>> token_groups(const Layout& layout) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> groups;
  for (const Span& s : layout.spans) {
    std::vector<int64_t> tokens(static_cast<size_t>(s.length));
    for (int64_t i = 0; i < s.length; ++i) tokens[static_cast<size_t>(i)] = s.offset + i;
    groups.emplace_back(s.name, tokens);
    if (s.offset == 0) continue;
    for (int64_t& t : tokens) --t;
    groups.emplace_back("before " + s.name, tokens);
  }
  return groups;
}

/// A loop variable no span is called.
std::string loop_variable(const Layout& layout) {
  for (const char* name : {"i", "j", "k", "idx", "loop_index"}) {
    if (layout.find(name) == nullptr) return name;
  }
  return "loop_index_";
}

/// Constant offsets between two spans of at most 64 tokens: `for i in a..b { open S[i] -> T[i+o] }`
/// where every cell of the band is allowed somewhere in the draft's planes (checked later).
void add_offset_candidates(const Layout& layout, std::vector<Candidate>& out) {
  const std::string v = loop_variable(layout);
  for (const Span& s : layout.spans) {
    for (const Span& t : layout.spans) {
      if (s.length < 3 || t.length < 3 || s.length > 64 || t.length > 64) continue;
      for (int64_t o = -(s.length - 1); o < t.length; ++o) {
        const int64_t first = std::max<int64_t>(0, -o), end = std::min(s.length, t.length - o);
        if (end - first < 3) continue;
        Candidate c;
        for (int64_t i = first; i < end; ++i) c.cells.emplace_back(s.offset + i, t.offset + i + o);
        if (&s == &t && o == 0) {  // the whole span's own cells
          c.text = fmt::format("open diagonal {}", s.name);
          out.push_back(std::move(c));
          continue;
        }
        const std::string key =
            o == 0 ? v : fmt::format("{} {} {}", v, o > 0 ? '+' : '-', o > 0 ? o : -o);
        c.text = fmt::format("for {0} in {1}..{2} {{ open {3}[{0}] -> {4}[{5}] }}", v, first, end,
                             s.name, t.name, key);
        out.push_back(std::move(c));
      }
    }
  }
}

/// The shapes the compiler lowers (diagonal, align, product, local, shift, cycle), as rules whose
/// cells the compiler computes.
std::vector<std::string> shape_rules(const Layout& layout) {
  std::vector<std::string> rules = {"open diagonal"};
  std::vector<const Span*> digits;
  for (const Span& s : layout.spans) {
    if (s.digits) digits.push_back(&s);
    if (s.grid) {
      for (int r = 1; r <= 3; ++r) {
        for (const char* metric : {"chebyshev", "manhattan"}) {
          rules.push_back(fmt::format("open local {} radius {} metric {}", s.name, r, metric));
        }
      }
      for (int dy = -2; dy <= 2; ++dy) {
        for (int dx = -2; dx <= 2; ++dx) {
          if (dy != 0 || dx != 0)
            rules.push_back(fmt::format("open shift {} by ({}, {})", s.name, dy, dx));
        }
      }
    }
    if (s.length >= 3 && s.length <= 64) {
      // Around a cycle of L tokens no two are more than L / 2 apart: a wider window opens the
      // whole span, which `S -> S` says plainly.
      for (int64_t w = 2; w <= s.length / 2; ++w)
        rules.push_back(fmt::format("open cycle {} window {}", s.name, w));
    }
  }
  for (const Span* a : digits) {
    for (const Span* b : digits) {
      if (b->offset <= a->offset) continue;
      for (const Span* c : digits) {
        if (c == a || c == b) continue;
        for (const std::string& target : {c->name, "before " + c->name}) {
          if (target.rfind("before", 0) == 0 && c->offset == 0) continue;
          for (const char* shape : {"align", "product"}) {
            for (const char* carry : {"", " carry"}) {
              rules.push_back(
                  fmt::format("open {} {}, {} -> {}{}", shape, a->name, b->name, target, carry));
            }
          }
        }
      }
    }
  }
  return rules;
}

/// Every candidate rule for the draft's layout.
std::vector<Candidate> candidates(const SpecDraft& draft, const std::string& header) {
  std::vector<Candidate> out;
  const int64_t n = draft.layout.size();
  for (const std::string& rule : shape_rules(draft.layout))
    out.push_back({rule, cells_of(header, rule, n)});
  const auto groups = token_groups(draft.layout);
  for (const auto& [rows_name, rows] : groups) {
    for (const auto& [keys_name, keys] : groups) {
      Candidate c{fmt::format("open {} -> {}", rows_name, keys_name), {}};
      for (int64_t q : rows) {
        for (int64_t k : keys) c.cells.emplace_back(q, k);
      }
      out.push_back(std::move(c));
    }
  }
  add_offset_candidates(draft.layout, out);
  return out;
}

/// The rules of one plane: greedily the candidate that opens the most cells still to open (never
/// one the pattern closes), while it adds at least two; then the rest explicitly.
std::vector<std::string> plane_rules(const Plane& plane, const std::vector<Candidate>& all,
                                     const Layout& layout, std::vector<uint8_t>& covered) {
  std::vector<const Candidate*> usable;
  for (const Candidate& c : all) {
    const bool fits = std::all_of(c.cells.begin(), c.cells.end(),
                                  [&](const Cell& x) { return plane.allowed(x.first, x.second); });
    if (fits && !c.cells.empty()) usable.push_back(&c);
  }
  auto gain = [&](const Candidate& c) {
    int64_t count = 0;
    for (const auto& [q, k] : c.cells) {
      count += plane.wanted(q, k) && covered[static_cast<size_t>(q * plane.n + k)] == 0;
    }
    return count;
  };
  std::vector<std::string> rules;
  for (;;) {
    const Candidate* best = nullptr;
    int64_t best_gain = 1;  // a rule that adds one cell says no more than an explicit pair
    for (const Candidate* c : usable) {
      const int64_t g = gain(*c);
      if (g > best_gain) best = c, best_gain = g;
    }
    if (best == nullptr) break;
    rules.push_back(best->text);
    for (const auto& [q, k] : best->cells) covered[static_cast<size_t>(q * plane.n + k)] = 1;
  }
  std::vector<Cell> rest;
  for (int64_t q = 0; q < plane.n; ++q) {
    for (int64_t k = 0; k < plane.n; ++k) {
      if (plane.wanted(q, k) && covered[static_cast<size_t>(q * plane.n + k)] == 0)
        rest.emplace_back(q, k);
    }
  }
  for (const auto& [q, k] : rest) covered[static_cast<size_t>(q * plane.n + k)] = 1;
  for (std::string& line : explicit_rules(layout, rest, "open")) rules.push_back(std::move(line));
  return rules;
}

/// `hard causal` when the hard mask is exactly the causal one, else its cells explicitly.
std::vector<std::string> hard_rules(const SpecDraft& draft) {
  if (!draft.hard) return {};
  const int64_t n = draft.layout.size();
  std::vector<Cell> cells;
  bool causal = true;
  for (int64_t q = 0; q < n; ++q) {
    for (int64_t k = 0; k < n; ++k) {
      const bool hard = (*draft.hard)[static_cast<size_t>(q * n + k)] != 0;
      causal &= hard == (k > q);
      if (hard) cells.emplace_back(q, k);
    }
  }
  if (causal && !cells.empty()) return {"hard causal"};
  return explicit_rules(draft.layout, cells, "hard");
}

void append_block(std::string& out, const std::string& opening,
                  const std::vector<std::string>& rules, const std::string& indent) {
  out += indent + opening + " {\n";
  for (const std::string& rule : rules) out += indent + "  " + rule + "\n";
  out += indent + "}\n";
}

/// The rules of every plane: at top level when all planes agree, else per layer (when a layer's
/// heads agree) or per layer and head.
std::string body(const SpecDraft& draft, const std::vector<Candidate>& all) {
  const int64_t n = draft.layout.size();
  const size_t plane_size = static_cast<size_t>(n * n);
  auto plane = [&](int64_t l, int64_t h) {
    const auto begin =
        draft.pattern.begin() + static_cast<std::ptrdiff_t>((l * draft.heads + h) * n * n);
    return Plane{n, std::vector<uint8_t>(begin, begin + static_cast<std::ptrdiff_t>(plane_size)),
                 draft.hard ? &*draft.hard : nullptr};
  };
  auto same = [&](int64_t l1, int64_t h1, int64_t l2, int64_t h2) {  // in place, no copies
    const auto first = [&](int64_t l, int64_t h) {
      return draft.pattern.begin() + static_cast<std::ptrdiff_t>((l * draft.heads + h) * n * n);
    };
    return std::equal(first(l1, h1), first(l1, h1) + static_cast<std::ptrdiff_t>(plane_size),
                      first(l2, h2));
  };
  bool all_same = true;
  for (int64_t l = 0; l < draft.layers; ++l) {
    for (int64_t h = 0; h < draft.heads; ++h) all_same &= same(0, 0, l, h);
  }
  std::string out;
  std::vector<uint8_t> common(plane_size, 0);  // cells the top-level rules open
  if (all_same) {
    for (const std::string& rule : plane_rules(plane(0, 0), all, draft.layout, common)) {
      out += rule + "\n";
    }
    return out;
  }
  // What every plane opens goes first, at top level; the blocks add each plane's own cells.
  Plane shared = plane(0, 0);
  for (int64_t l = 0; l < draft.layers; ++l) {
    for (int64_t h = 0; h < draft.heads; ++h) {
      const Plane p = plane(l, h);
      for (size_t i = 0; i < plane_size; ++i) shared.open[i] &= p.open[i];
    }
  }
  for (const std::string& rule : plane_rules(shared, all, draft.layout, common)) out += rule + "\n";
  auto rules_of = [&](int64_t l, int64_t h) {
    std::vector<uint8_t> covered = common;
    return plane_rules(plane(l, h), all, draft.layout, covered);
  };
  for (int64_t l = 0; l < draft.layers; ++l) {
    bool heads_same = true;
    for (int64_t h = 1; h < draft.heads; ++h) heads_same &= same(l, 0, l, h);
    if (heads_same) {
      const auto rules = rules_of(l, 0);
      if (!rules.empty()) append_block(out, fmt::format("layer {}", l), rules, "");
      continue;
    }
    const bool one_layer = draft.layers == 1;  // head blocks need no layer block around them
    if (!one_layer) out += fmt::format("layer {} {{\n", l);
    for (int64_t h = 0; h < draft.heads; ++h) {
      const auto rules = rules_of(l, h);
      if (!rules.empty())
        append_block(out, fmt::format("head {}", h), rules, one_layer ? "" : "  ");
    }
    if (!one_layer) out += "}\n";
  }
  return out;
}

/// Compiles `text` and checks that it gives the draft's pattern and hard mask.
void check_round_trip(const SpecDraft& draft, const std::string& text) {
  CompileOptions options;
  options.provenance = false;
  const CompiledMask mask = compile_source(text, "<written spec>", options);
  const std::vector<uint8_t> pattern = open_pattern(mask);
  const int64_t n = draft.layout.size();
  bool same = mask.layers == draft.layers && mask.heads == draft.heads &&
              mask.hard.has_value() == draft.hard.has_value() &&
              (!draft.hard || *mask.hard == *draft.hard);
  for (size_t i = 0; same && i < pattern.size(); ++i) {
    const size_t cell = i % static_cast<size_t>(n * n);
    const bool hard = draft.hard && (*draft.hard)[cell] != 0;
    same = hard || (pattern[i] != 0) == (draft.pattern[i] != 0);
  }
  internal_check(
      same, "write_spec: the written spec does not compile to the pattern it was written from");
}

/// `name` when it is an identifier, else `distilled` (`mask NAME` is a label only).
std::string mask_name(const std::string& name) {
  const bool identifier = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                          std::all_of(name.begin(), name.end(),
                                      [](unsigned char c) { return std::isalnum(c) || c == '_'; });
  return identifier ? name : "distilled";
}

}  // namespace

bool opens_every_allowed_cell(const SpecDraft& draft) {
  const size_t plane = static_cast<size_t>(draft.layout.size() * draft.layout.size());
  for (size_t i = 0; i < draft.pattern.size(); ++i) {
    if (draft.pattern[i] == 0 && !(draft.hard && (*draft.hard)[i % plane] != 0)) return false;
  }
  return true;
}

std::string write_spec(const SpecDraft& draft) {
  const int64_t n = draft.layout.size();
  internal_check(draft.pattern.size() == static_cast<size_t>(draft.layers * draft.heads * n * n),
                 "write_spec: the pattern is not [L, H, N, N]");
  internal_check(!draft.hard || draft.hard->size() == static_cast<size_t>(n * n),
                 "write_spec: the hard mask is not [N, N]");
  SpecDraft one_plane = draft;
  one_plane.layers = one_plane.heads = 1;
  const std::string header = "mask draft\n" + declarations(one_plane);
  try {
    compile_source(header + "default close\n", "<layout>", {});
  } catch (const SpecError& e) {
    throw InputError(fmt::format("cannot write the layout {} as a .mask spec: {}",
                                 layout_text(draft.layout), e.what()));
  }
  std::string text;
  for (const std::string& line : draft.comments) {
    text += line.empty() ? std::string("#\n") : fmt::format("# {}\n", line);
  }
  // Every plane open wherever the hard mask allows (a union of spread attention): one line says it.
  const bool all_open = opens_every_allowed_cell(draft);
  text += fmt::format("mask {}\n\n{}\ndefault {}\n", mask_name(draft.name), declarations(draft),
                      all_open ? "open" : "close");
  for (const std::string& rule : hard_rules(draft)) text += rule + "\n";
  if (!all_open) text += body(draft, candidates(draft, header));
  check_round_trip(draft, text);
  return text;
}

std::optional<std::string> distilled_origin(std::string_view spec) {
  if (!spec.starts_with(kDistilledHeader)) return std::nullopt;
  const size_t end = spec.find('\n');
  const std::string_view command = spec.substr(0, end);
  const size_t options = command.rfind(" --from ");
  const size_t close = command.rfind('`');
  if (options == std::string_view::npos || close == std::string_view::npos || close < options) {
    return std::nullopt;
  }
  std::string origin(command.substr(options + 1, close - options - 1));
  constexpr std::string_view kRun = "# run: ";
  if (end != std::string_view::npos && spec.substr(end + 1).starts_with(kRun)) {
    std::string_view run = spec.substr(end + 1 + kRun.size());
    run = run.substr(0, run.find('\n'));
    origin += "; " + std::string(run.substr(0, run.find(", seed ")));
  }
  return origin;
}

}  // namespace maskprior
