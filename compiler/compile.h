// The .mask compiler's entry points: spec text or file -> CompiledMask.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/compiled_mask.h"

namespace maskprior {

/// Options of one compile: command-line overrides and the size cap.
struct CompileOptions {
  std::map<std::string, std::string> defines;  // -D NAME=VALUE (value text, parsed as EXPR literal)
  std::optional<double> open_value;            // --open, overrides `scale open = ...`
  std::optional<double> close_value;           // --close
  uint64_t max_bytes = uint64_t{4} << 30;      // refuse outputs larger than this (mask+provenance)
  /// Also build the provenance tensor (which rule wrote each cell): what `maskc compile` saves,
  /// `maskc show` and `.provenance` in Python show, and a run's learned mask keeps. A caller that
  /// reads only M and the hard mask (validate, report) turns it off: the compiler then writes one
  /// array of L·H·N·N cells instead of two (half the memory and about half the time at large N)
  /// and CompiledMask::provenance stays empty.
  bool provenance = true;
};

/// Compiles spec text; `filename` is used in diagnostics. Throws SpecError on the first error.
CompiledMask compile_source(const std::string& source, const std::string& filename,
                            const CompileOptions& options = {});

/// Reads and compiles a .mask file. Throws InputError if unreadable, SpecError if malformed.
CompiledMask compile_file(const std::string& path, const CompileOptions& options = {});

}  // namespace maskprior
