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
  std::vector<std::string> digits;   // SPAN=lsb_first|msb_first, checked at parse time
  std::optional<double> open_value;
  std::optional<double> close_value;
  uint64_t max_bytes = CompileOptions{}.max_bytes;
};

/// Registers -D NAME=VALUE (repeatable) on `cmd`; a malformed -D is a usage error (exit 2).
CLI::Option* add_define_flag(CLI::App& cmd, SpecFlags& flags);
/// Registers --digits SPAN=lsb_first|msb_first (repeatable) on `cmd`; a malformed one is a usage
/// error (exit 2).
CLI::Option* add_digits_flag(CLI::App& cmd, SpecFlags& flags);
/// Registers --open, --close (finite numbers) and --max-bytes (0 to kMaxBytesCeiling) on `cmd`;
/// anything else is a usage error (exit 2).
void add_scale_and_size_flags(CLI::App& cmd, SpecFlags& flags);

/// The compile options the flags ask for. Two -D of one name, or two --digits of one span, are a
/// usage error (CLI::ValidationError, exit 2).
CompileOptions compile_options(const SpecFlags& flags);

/// Throws InputError when `output` (the value of `flag`) is the file `input`: the same file
/// (device and inode) or the same path once made absolute and normalised.
void check_output_is_not_input(const std::string& input, const std::string& output,
                               const std::string& flag);

/// True when `path` names a .mask spec (by its extension) rather than a tensor file.
bool is_spec_path(const std::string& path);

/// A .mask spec compiled with the flags' options (its warnings printed to `warnings`), or a
/// tensor file written by `maskc compile` read within the flags' --max-bytes.
CompiledMask load_spec_or_mask_file(const std::string& path, const SpecFlags& flags,
                                    std::ostream& warnings);

/// Prints the compiler's warnings, one formatted diagnostic each.
void print_warnings(const CompiledMask& mask, std::ostream& out);

}  // namespace maskprior::cli
