// The .mask compiler's entry points: spec text or file -> CompiledMask.
#pragma once

#include <string>

#include "compiler/compile_options.h"
#include "core/compiled_mask.h"

namespace maskprior {

/// Compiles spec text; `filename` is used in diagnostics. Throws SpecError on the first error.
CompiledMask compile_source(const std::string& source, const std::string& filename,
                            const CompileOptions& options = {});

/// Reads and compiles a .mask file. Throws InputError if unreadable, SpecError if malformed.
CompiledMask compile_file(const std::string& path, const CompileOptions& options = {});

}  // namespace maskprior
