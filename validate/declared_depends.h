// Declared dependencies (`maskc validate --depends`): which inputs each output needs, written as
// text instead of a truth table with a row for every input.
//
//   depends     ::= declaration {';' declaration} [';']
//   declaration ::= output ':' [selector {',' selector}]      (no selector: a constant)
//   output      ::= SPAN ['[' (NAME | INT) ']']               c[i]: every token of c, i its index
//   selector    ::= SPAN ['[' (index | [index] '..' [index]) ']']
//   index       ::= term {('+' | '-') term},  term ::= INT | NAME (the output's index)
//
// Selectors read as in a .mask spec: `a` is every token of span a, `a[i]` one token, `a[x..y]`
// the half-open range a[x] up to a[y-1] (`a[..i+1]`: a[0] to a[i]). Blanks may stand between any
// two tokens. The PEGTL rules are grammar/depends_grammar.hpp, built from the .mask lexemes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/layout.h"

namespace maskprior::validate {

/// An index linear in the output's index i: constant + per_variable·i.
struct DependsIndex {
  int64_t constant = 0;
  int64_t per_variable = 0;
  int64_t at(int64_t i) const { return constant + per_variable * i; }
};

/// `a`, `a[e]`, `a[e..e]` as written.
struct DependsSelector {
  enum class Kind { kSpan, kIndex, kRange };
  std::string span;
  Kind kind = Kind::kSpan;
  DependsIndex first;               // kIndex: the token; kRange: the first token
  std::optional<DependsIndex> end;  // kRange: one past the last token (none: the span's end)
  bool has_first = true;            // kRange: false for `a[..e]`
  int column = 0;                   // 1-based, in the declaration's text
  std::string text;                 // as written, for messages
};

struct DependsDeclaration {
  DependsSelector output;  // kSpan, or kIndex with the variable or a constant
  std::string variable;    // `i` of `c[i]`; empty when the output names no variable
  std::vector<DependsSelector> inputs;
};

/// The declarations of one `--depends` text; `flag` (1-based: which --depends) is the line of
/// error positions. Throws SpecError at file `source` (how the caller names its texts), line
/// `flag`, with the column, for text that is not a declaration.
std::vector<DependsDeclaration> parse_depends(const std::string& text, int flag = 1,
                                              const std::string& source = "--depends");

/// Declarations bound to a spec's tokens.
struct DeclaredDependencies {
  std::vector<int64_t> outputs;              // output tokens, in the order declared
  std::vector<std::vector<int64_t>> inputs;  // per output: its input tokens, ascending
};

/// Binds every `--depends` text (parsed again, flag by flag) to `layout`. Throws SpecError at the
/// selector for a span the spec lacks, an index outside its span, a range that ends before it
/// starts, and an output declared twice; `spec` names the spec in messages, `source` the texts.
DeclaredDependencies bind_depends(const Layout& layout, const std::vector<std::string>& depends,
                                  const std::string& spec, const std::string& source = "--depends");

}  // namespace maskprior::validate
