#include "compiler/warnings.h"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <map>

#include "core/cells.h"

namespace maskprior {
namespace {

// At most this many row labels are spelled out in one warning.
constexpr size_t kListedRows = 8;

void unused_rules(const std::vector<ast::Statement>& body,
                  const std::set<const ast::Statement*>& wrote, const SourceText& source,
                  CompiledMask& out) {
  for (const ast::Statement& st : body) {
    if (st.kind == ast::StatementKind::kRule && wrote.count(&st) == 0) {
      out.warnings.push_back(
          source.diagnostic(Severity::kWarning, st.pos, "this rule writes no cell"));
    }
    unused_rules(st.body, wrote, source, out);
  }
}

std::string row_list(const std::vector<int64_t>& rows, const Layout& layout) {
  std::string s = rows.size() == 1 ? "row " : "rows ";
  for (size_t i = 0; i < rows.size() && i < kListedRows; ++i) {
    s += (i == 0 ? "" : ", ") + layout.token_label(rows[i]);
  }
  if (rows.size() > kListedRows) s += fmt::format(" and {} more", rows.size() - kListedRows);
  return s;
}

ast::Pos span_position(int64_t token, const Declarations& decls) {
  for (size_t i = 0; i < decls.layout.spans.size(); ++i) {
    const Span& s = decls.layout.spans[i];
    if (token >= s.offset && token < s.offset + s.length) return decls.span_pos[i];
  }
  return decls.tokens_pos;
}

// A quick witness that row q is not uniform: the column a rule wrote last holds another value than
// the row's first non-hard cell. False means "not known": the full scan decides.
bool differs_early(const CompiledMask& out, int64_t q, const float* row, int64_t column) {
  if (column < 0 || out.is_hard(q, column)) return false;
  for (int64_t k = 0; k < out.n; ++k) {
    if (!out.is_hard(q, k)) return row[k] != row[column];
  }
  return false;
}

// Rows of plane (l, h) whose cells that are not hard-excluded all hold one value that leans
// closed (core/cells.h).
std::vector<int64_t> closed_rows(const CompiledMask& out, int64_t l, int64_t h,
                                 const WrittenColumns& written) {
  const int64_t n = out.n;
  std::vector<uint8_t> flag(static_cast<size_t>(n), 0);
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, n), [&](const tbb::blocked_range<int64_t>& r) {
    for (int64_t q = r.begin(); q != r.end(); ++q) {
      const float* row = out.mask.data() + out.index(l, h, q, 0);
      if (differs_early(out, q, row, written[static_cast<size_t>(q)])) continue;  // flag stays 0
      bool seen = false;
      bool equal = true;
      float first = 0.0f;
      for (int64_t k = 0; k < n && equal; ++k) {
        if (out.is_hard(q, k)) continue;
        if (!seen) {
          first = row[k];
          seen = true;
        } else {
          equal = row[k] == first;
        }
      }
      const bool closed = leans_closed(out, static_cast<double>(first));
      flag[static_cast<size_t>(q)] = seen && equal && closed;
    }
  });
  std::vector<int64_t> rows;
  for (int64_t q = 0; q < n; ++q) {
    if (flag[static_cast<size_t>(q)]) rows.push_back(q);
  }
  return rows;
}

std::string plane_list(const std::vector<std::pair<int64_t, int64_t>>& planes,
                       const CompiledMask& out) {
  if (static_cast<int64_t>(planes.size()) == out.layers * out.heads) {
    return out.layers * out.heads == 1 ? "" : " in every layer and head";
  }
  std::string s = " in";
  for (size_t i = 0; i < planes.size() && i < kListedRows; ++i) {
    s += fmt::format("{} layer {} head {}", i == 0 ? "" : ",", planes[i].first, planes[i].second);
  }
  if (planes.size() > kListedRows) s += fmt::format(" and {} more", planes.size() - kListedRows);
  return s;
}

void uniformly_closed_rows(const Declarations& decls, const WrittenColumns& written,
                           const SourceText& source, CompiledMask& out) {
  std::map<std::vector<int64_t>, std::vector<std::pair<int64_t, int64_t>>> planes_by_rows;
  for (int64_t l = 0; l < out.layers; ++l) {
    for (int64_t h = 0; h < out.heads; ++h) {
      std::vector<int64_t> rows = closed_rows(out, l, h, written);
      if (!rows.empty()) planes_by_rows[std::move(rows)].emplace_back(l, h);
    }
  }
  for (const auto& [rows, planes] : planes_by_rows) {
    const float value = out.at(planes[0].first, planes[0].second, rows[0], 0);
    out.warnings.push_back(source.diagnostic(
        Severity::kWarning, span_position(rows[0], decls),
        fmt::format("{} {} uniformly closed{} (every cell {}): softmax turns a uniformly closed "
                    "row into uniform attention",
                    row_list(rows, out.layout), rows.size() == 1 ? "is" : "are",
                    plane_list(planes, out), value)));
  }
}

void fully_hard_rows(const HardRowPositions& hard_rows, const SourceText& source,
                     CompiledMask& out) {
  if (!out.hard) return;
  std::vector<int64_t> rows;
  for (int64_t q = 0; q < out.n; ++q) {
    bool all = true;
    for (int64_t k = 0; k < out.n && all; ++k) all = out.is_hard(q, k);
    if (all) rows.push_back(q);
  }
  if (rows.empty()) return;
  out.warnings.push_back(source.diagnostic(
      Severity::kWarning, hard_rows[static_cast<size_t>(rows[0])],
      fmt::format("{} {} every key excluded by `hard` rules: softmax has nothing to attend to",
                  row_list(rows, out.layout), rows.size() == 1 ? "has" : "have")));
}

}  // namespace

void add_warnings(const ast::Spec& spec, const std::set<const ast::Statement*>& wrote,
                  const Declarations& decls, const HardRowPositions& hard_rows,
                  const WrittenColumns& written, const SourceText& source, CompiledMask& out) {
  unused_rules(spec.statements, wrote, source, out);
  uniformly_closed_rows(decls, written, source, out);
  fully_hard_rows(hard_rows, source, out);
}

}  // namespace maskprior
