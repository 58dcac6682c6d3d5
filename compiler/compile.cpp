// The compiler pipeline: parse -> declarations -> size check -> resolve -> allocate -> rules ->
// warnings.
#include <fmt/format.h>

#include <set>

#include "compiler/compile.h"
#include "compiler/declarations.h"
#include "compiler/expand.h"
#include "compiler/lower.h"
#include "compiler/parse.h"
#include "compiler/resolve.h"
#include "compiler/source.h"
#include "compiler/warnings.h"
#include "core/regular_file.h"
#include "core/sha256.h"

namespace maskprior {

CompiledMask compile_source(const std::string& source, const std::string& filename,
                            const CompileOptions& options) {
  const SourceText text(source, filename);
  const ast::Spec spec = parse_spec(text);
  const Declarations decls = resolve_declarations(spec, text, options);
  check_output_size(decls, text, options.max_bytes, options.provenance);
  if (options.check_size) options.check_size(decls.layers, decls.heads, decls.layout.size());
  resolve_rules(spec, decls, text);

  CompiledMask out;
  out.name = decls.name;
  out.source_sha256 = sha256_hex(source);
  out.layout = decls.layout;
  out.open_value = decls.open_value;
  out.close_value = decls.close_value;
  for (const auto& [name, value] : decls.params) out.params[name] = value.real;
  allocate_mask(out, decls, options.provenance);

  HardRowPositions hard_rows(static_cast<size_t>(out.n));
  WrittenColumns written(static_cast<size_t>(out.n), -1);
  std::set<const ast::Statement*> wrote;
  expand_rules(spec, decls, text, options, [&](const LoweredRule& rule) {
    if (apply_rule(rule, out, hard_rows, written)) wrote.insert(rule.statement);
  });
  add_warnings(spec, wrote, decls, hard_rows, written, text, out);
  return out;
}

CompiledMask compile_file(const std::string& path, const CompileOptions& options) {
  // Regular files only (a FIFO would block, /dev/zero never ends), at most kMaxSpecBytes.
  return compile_source(read_regular_file(path, kMaxSpecBytes, "spec"), path, options);
}

}  // namespace maskprior
