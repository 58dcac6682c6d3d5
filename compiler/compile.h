// The .mask compiler's entry points: spec text or file -> CompiledMask.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/compile_options.h"
#include "core/compiled_mask.h"

namespace maskprior {

/// The largest spec compile_file reads, and `maskc serve` takes: far above any real spec (ours
/// are a few KB).
inline constexpr uint64_t kMaxSpecBytes = uint64_t{16} << 20;

/// Compiles spec text; `filename` is used in diagnostics. Throws SpecError on the first error.
CompiledMask compile_source(const std::string& source, const std::string& filename,
                            const CompileOptions& options = {});

/// Reads and compiles a .mask file. Throws InputError if unreadable, SpecError if malformed.
CompiledMask compile_file(const std::string& path, const CompileOptions& options = {});

}  // namespace maskprior
