#include "compiler/declarations.h"

#include <fmt/format.h>

#include <cmath>
#include <set>
#include <utility>

#include "compiler/parse.h"

namespace maskprior {
namespace {

bool is_declaration(ast::StatementKind kind) {
  switch (kind) {
    case ast::StatementKind::kParam:
    case ast::StatementKind::kTokens:
    case ast::StatementKind::kDigits:
    case ast::StatementKind::kGrid:
    case ast::StatementKind::kScale:
    case ast::StatementKind::kLayers:
    case ast::StatementKind::kHeads:
    case ast::StatementKind::kDefault:
      return true;
    default:
      return false;
  }
}

bool contains_hard(const std::vector<ast::Statement>& statements) {
  for (const ast::Statement& st : statements) {
    if (st.kind == ast::StatementKind::kRule && st.action == ast::RuleAction::kHard) return true;
    if (contains_hard(st.body)) return true;
  }
  return false;
}

// Finds a declared span or throws at `pos`.
Span& span_named(Declarations& d, const std::string& name, ast::Pos pos, const SourceText& source,
                 const char* statement) {
  if (!d.has_tokens) {
    source.fail(
        pos, fmt::format("`{}` must come after `tokens`, which declares span {}", statement, name));
  }
  // `d` is ours to change; find_span looks the span up.
  return const_cast<Span&>(find_span(name, pos, d, source));
}

// Keeps a single-occurrence declaration single.
void once(std::set<ast::StatementKind>& seen, const ast::Statement& st, const SourceText& source,
          const char* keyword) {
  if (!seen.insert(st.kind).second) {
    source.fail(st.pos, fmt::format("duplicate `{}`: it may appear once", keyword));
  }
}

void declare_param(Declarations& d, const ast::Statement& st, const SourceText& source,
                   const CompileOptions& options) {
  if (d.params.count(st.name) != 0) {
    source.fail(st.name_pos, fmt::format("duplicate parameter {}", st.name));
  }
  const auto define = options.defines.find(st.name);
  if (define == options.defines.end()) {
    d.params[st.name] = evaluate(*st.value, d.params, source);
    return;
  }
  // A define is evaluated like the spec's own expression, in its own one-line source.
  const std::string origin = define_origin(options, st.name);
  const SourceText define_source(define->second, origin);
  const ast::ExprPtr e = parse_define_value(origin, define->second);
  d.params[st.name] = evaluate(*e, d.params, define_source);
}

void declare_tokens(Declarations& d, const ast::Statement& st, const SourceText& source) {
  d.has_tokens = true;
  d.tokens_pos = st.pos;
  int64_t offset = 0;
  for (const ast::SpanDecl& decl : st.spans) {
    if (!d.span_index.emplace(decl.name, d.layout.spans.size()).second) {
      source.fail(decl.pos, fmt::format("duplicate span name {}", decl.name));
    }
    int64_t length = 1;
    if (decl.length) {
      length = evaluate_integer(*decl.length, d.params, source, "the length of span " + decl.name);
      if (length < 1) {
        source.fail(decl.length->pos,
                    fmt::format("span {} has length {}; a span needs at least one token", decl.name,
                                length));
      }
    }
    Span span;
    span.name = decl.name;
    span.offset = offset;
    span.length = length;
    if (__builtin_add_overflow(offset, length, &offset)) {
      source.fail(decl.pos, "the sequence is too long (integer overflow)");
    }
    d.layout.spans.push_back(std::move(span));
    d.span_pos.push_back(decl.pos);
  }
}

void declare_grid(Declarations& d, const ast::Statement& st, const SourceText& source) {
  Span& span = span_named(d, st.name, st.name_pos, source, "grid");
  if (span.grid) source.fail(st.pos, fmt::format("duplicate `grid` for span {}", st.name));
  const int64_t h = evaluate_integer(*st.value, d.params, source, "the grid height");
  const int64_t w = evaluate_integer(*st.value2, d.params, source, "the grid width");
  if (h < 1) source.fail(st.value->pos, fmt::format("grid height {} must be at least 1", h));
  if (w < 1) source.fail(st.value2->pos, fmt::format("grid width {} must be at least 1", w));
  int64_t cells = 0;
  if (__builtin_mul_overflow(h, w, &cells)) {
    source.fail(st.value->pos, fmt::format("grid {} x {} is too large for span {} of {} tokens", h,
                                           w, span.name, span.length));
  }
  if (cells != span.length) {
    source.fail(st.value->pos,
                fmt::format("grid {} x {} has {} cells but span {} has {} tokens; expected H·W to "
                            "equal the span length",
                            h, w, cells, span.name, span.length));
  }
  span.grid = std::make_pair(h, w);
}

int64_t positive_count(const ast::Statement& st, const Declarations& d, const SourceText& source,
                       const char* what) {
  const int64_t n =
      evaluate_integer(*st.value, d.params, source, std::string("the number of ") + what);
  if (n < 1)
    source.fail(st.value->pos, fmt::format("the number of {} must be at least 1, got {}", what, n));
  return n;
}

// One declaration statement; `seen` keeps single declarations single, `default_st` is set by
// `default` (its value is evaluated after --open/--close apply).
void declare(Declarations& d, const ast::Statement& st, std::set<ast::StatementKind>& seen,
             const ast::Statement*& default_st, const SourceText& source,
             const CompileOptions& options) {
  switch (st.kind) {
    case ast::StatementKind::kParam:
      declare_param(d, st, source, options);
      break;
    case ast::StatementKind::kTokens:
      once(seen, st, source, "tokens");
      declare_tokens(d, st, source);
      break;
    case ast::StatementKind::kDigits: {
      Span& span = span_named(d, st.name, st.name_pos, source, "digits");
      if (span.digits) source.fail(st.pos, fmt::format("duplicate `digits` for span {}", st.name));
      span.digits = st.lsb_first ? DigitOrder::kLsbFirst : DigitOrder::kMsbFirst;
      break;
    }
    case ast::StatementKind::kGrid:
      declare_grid(d, st, source);
      break;
    case ast::StatementKind::kScale:
      once(seen, st, source, "scale");
      for (const ast::ScaleItem& item : st.scale) {
        const double v = evaluate(*item.value, d.params, source).real;
        if (!is_scale_value(v)) {  // the value is written into float32 cells
          source.fail(item.value->pos, fmt::format("{} value {} does not fit in float32",
                                                   item.is_open ? "open" : "close", v));
        }
        (item.is_open ? d.open_value : d.close_value) = v;
      }
      break;
    case ast::StatementKind::kLayers:
      once(seen, st, source, "layers");
      d.layers = positive_count(st, d, source, "layers");
      break;
    case ast::StatementKind::kHeads:
      once(seen, st, source, "heads");
      d.heads = positive_count(st, d, source, "heads");
      break;
    case ast::StatementKind::kDefault:
      once(seen, st, source, "default");
      default_st = &st;
      break;
    default:
      break;
  }
}

// Throws InputError for a -D naming no parameter of the spec.
void check_defines(const Declarations& d, const SourceText& source, const CompileOptions& options) {
  for (const auto& [name, value] : options.defines) {
    if (d.params.count(name) == 0) {
      std::string known;
      for (const auto& [p, v] : d.params) known += (known.empty() ? "" : ", ") + p;
      throw InputError(fmt::format("{} = {}: {} has no parameter {} (its parameters: {})",
                                   define_origin(options, name), quote_input(value),
                                   source.filename(), name, known.empty() ? "none" : known),
                       SourceLocation{source.filename()});
    }
  }
}

// Throws InputError for an open or close value that is not a finite float32 (is_scale_value).
void check_scale_overrides(const CompileOptions& options) {
  for (const auto& [what, value] :
       {std::pair{"open", options.open_value}, std::pair{"close", options.close_value}}) {
    if (value && !is_scale_value(*value)) {
      throw InputError(
          fmt::format("the {} value {} is not a finite float32 number (it must be "
                      "finite and at most {:g} in magnitude)",
                      what, *value, kMaxScaleValue));
    }
  }
}

// Applies --digits: each named span takes the given order, whatever the spec declared.
void override_digits(Declarations& d, const SourceText& source, const CompileOptions& options) {
  for (const auto& [name, order] : options.digit_orders) {
    const auto it = d.span_index.find(name);
    if (it == d.span_index.end()) {
      throw InputError(fmt::format("--digits {}: {}: {}", digit_order_keyword(order),
                                   source.filename(), d.layout.unknown_span(name)));
    }
    d.layout.spans[it->second].digits = order;
  }
}

// The value every cell starts with: `default_st` (null if none) after --open/--close.
double default_value(const Declarations& d, const ast::Statement* default_st,
                     const SourceText& source) {
  if (default_st == nullptr) return d.close_value;
  switch (default_st->default_kind) {
    case ast::DefaultKind::kOpen:
      return d.open_value;
    case ast::DefaultKind::kClose:
      return d.close_value;
    case ast::DefaultKind::kValue:
      return evaluate(*default_st->value, d.params, source).real;
  }
  return d.close_value;
}

}  // namespace

Declarations resolve_declarations(const ast::Spec& spec, const SourceText& source,
                                  const CompileOptions& options) {
  Declarations d;
  d.name = spec.name;
  d.tokens_pos = spec.name_pos;
  d.first_rule = spec.statements.size();
  d.has_hard = contains_hard(spec.statements);
  std::set<ast::StatementKind> seen;
  const ast::Statement* default_st = nullptr;

  for (size_t i = 0; i < spec.statements.size(); ++i) {
    const ast::Statement& st = spec.statements[i];
    if (!is_declaration(st.kind)) {
      if (d.first_rule == spec.statements.size()) d.first_rule = i;
      continue;
    }
    if (d.first_rule != spec.statements.size()) {
      source.fail(st.pos, fmt::format("declarations must come before the first rule (line {})",
                                      spec.statements[d.first_rule].pos.line));
    }
    declare(d, st, seen, default_st, source, options);
  }

  check_defines(d, source, options);
  if (!d.has_tokens) {
    source.fail(spec.name_pos, "the spec declares no tokens; expected a `tokens` statement");
  }
  override_digits(d, source, options);
  check_scale_overrides(options);
  if (options.open_value) d.open_value = *options.open_value;
  if (options.close_value) d.close_value = *options.close_value;
  d.default_value = default_value(d, default_st, source);
  return d;
}

const Span& find_span(const std::string& name, ast::Pos pos, const Declarations& decls,
                      const SourceText& source) {
  const auto it = decls.span_index.find(name);
  if (it != decls.span_index.end()) return decls.layout.spans[it->second];
  source.fail(pos, decls.layout.unknown_span(name));
}

}  // namespace maskprior
