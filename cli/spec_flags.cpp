#include "cli/spec_flags.h"

#include <cctype>
#include <ostream>

namespace maskprior::cli {
namespace {

bool is_identifier(const std::string& text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

/// CLI11 validator for NAME=VALUE: returns an empty string when fine, else the complaint.
std::string check_define(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos) return "-D expects NAME=VALUE, got '" + text + "'";
  const std::string name = text.substr(0, eq);
  if (!is_identifier(name)) return "-D: '" + name + "' is not a parameter name in '" + text + "'";
  if (eq + 1 == text.size()) return "-D: no value after '=' in '" + text + "'";
  return {};
}

}  // namespace

CLI::Option* add_define_flag(CLI::App& cmd, SpecFlags& flags) {
  return cmd
      .add_option("-D,--define", flags.defines,
                  "Override a `param` of the spec, e.g. -D n=20 (repeatable)")
      ->type_name("NAME=VALUE")
      ->check(CLI::Validator(check_define, /*validator_desc=*/"", "define"))
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void add_scale_and_size_flags(CLI::App& cmd, SpecFlags& flags) {
  cmd.add_option("--open", flags.open_value,
                 "Value that `open` writes, overriding the spec's `scale open = ...`");
  cmd.add_option("--close", flags.close_value,
                 "Value that `close` writes, overriding the spec's `scale close = ...`");
  cmd.add_option("--max-bytes", flags.max_bytes,
                 "Refuse masks whose mask + provenance tensors would exceed this size, e.g. 500M, "
                 "2GiB (units are powers of 1024; default 4GiB)")
      ->transform(CLI::AsSizeValue(/*kb_is_1000=*/false).description(""))
      ->type_name("SIZE");
}

CompileOptions compile_options(const SpecFlags& flags) {
  CompileOptions options;
  for (const std::string& define : flags.defines) {
    const size_t eq = define.find('=');
    options.defines[define.substr(0, eq)] = define.substr(eq + 1);
  }
  options.open_value = flags.open_value;
  options.close_value = flags.close_value;
  options.max_bytes = flags.max_bytes;
  return options;
}

void print_warnings(const CompiledMask& mask, std::ostream& out) {
  for (const Diagnostic& warning : mask.warnings) out << format_diagnostic(warning) << '\n';
}

}  // namespace maskprior::cli
