// Flags shared by the subcommands that compile a .mask spec (`compile`, `show`).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "compiler/compile.h"

namespace maskprior::cli {

/// Values of -D, --open, --close and --max-bytes, as parsed.
struct SpecFlags {
  std::vector<std::string> defines;  // NAME=VALUE, checked at parse time
  std::optional<double> open_value;
  std::optional<double> close_value;
  uint64_t max_bytes = CompileOptions{}.max_bytes;
};

/// Registers -D NAME=VALUE (repeatable) on `cmd`; a malformed -D is a usage error (exit 2).
CLI::Option* add_define_flag(CLI::App& cmd, SpecFlags& flags);
/// Registers --open, --close and --max-bytes on `cmd`.
void add_scale_and_size_flags(CLI::App& cmd, SpecFlags& flags);

/// The compile options the flags ask for (a later -D of a name wins).
CompileOptions compile_options(const SpecFlags& flags);

/// Prints the compiler's warnings, one formatted diagnostic each.
void print_warnings(const CompiledMask& mask, std::ostream& out);

}  // namespace maskprior::cli
