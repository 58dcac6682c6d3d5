#include "cli/spec_flags.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "core/error.h"
#include "io/mask_file.h"

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
  if (eq == std::string::npos) return "-D expects NAME=VALUE, got " + quote_input(text);
  const std::string name = text.substr(0, eq);
  if (!is_identifier(name)) {
    return "-D: " + quote_input(name) + " is not a parameter name in " + quote_input(text);
  }
  if (eq + 1 == text.size()) return "-D: no value after '=' in " + quote_input(text);
  if (text.find('=', eq + 1) != std::string::npos) {
    return "-D expects NAME=VALUE with one '=', got " + quote_input(text);
  }
  return {};
}

/// CLI11 validator for --digits SPAN=ORDER: an empty string when fine, else the complaint.
std::string check_digits(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos) {
    return "--digits expects SPAN=lsb_first|msb_first, got " + quote_input(text);
  }
  if (!is_identifier(text.substr(0, eq))) {
    return "--digits: " + quote_input(text.substr(0, eq)) + " is not a span name in " +
           quote_input(text);
  }
  if (!parse_digit_order(std::string_view(text).substr(eq + 1))) {
    return "--digits: the order must be lsb_first or msb_first, got " + quote_input(text);
  }
  return {};
}

/// CLI11 check of --open/--close: the value must be finite, also as float32 (the mask's type).
std::string check_scale_value(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return {};  // not a number at all: CLI11's conversion says so
  if (!is_scale_value(value)) {
    return fmt::format("expects a finite number (at most {:g} in magnitude, float32), got {}",
                       kMaxScaleValue, quote_input(text));
  }
  return {};
}

/// CLI11 transform of --max-bytes: a size such as 500M or 2GiB (AsSizeValue), from 0 to
/// kMaxBytesCeiling. A negative size is refused, not wrapped around into "no cap".
std::string transform_max_bytes(std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first != std::string::npos && text[first] == '-') {
    return "expects a size of at least 0, got " + quote_input(text) +
           " (the cap cannot be switched off; at most 64GiB)";
  }
  const std::string original = text;
  std::string error = CLI::AsSizeValue(/*kb_is_1000=*/false)(text);
  if (!error.empty()) return error;
  uint64_t bytes = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), bytes);
  if (ec != std::errc() || end != text.data() + text.size() || bytes > kMaxBytesCeiling) {
    return "expects a size of at most 64GiB (" + std::to_string(kMaxBytesCeiling) +
           " bytes), got " + quote_input(original);
  }
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

CLI::Option* add_digits_flag(CLI::App& cmd, SpecFlags& flags) {
  return cmd
      .add_option("--digits", flags.digits,
                  "Override the digit order of a span, as if the spec declared `digits SPAN "
                  "ORDER` (align and product follow digit places), e.g. --digits c=msb_first "
                  "(repeatable)")
      ->type_name("SPAN=ORDER")
      ->check(CLI::Validator(check_digits, /*validator_desc=*/"", "digits"))
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void add_scale_and_size_flags(CLI::App& cmd, SpecFlags& flags) {
  const CLI::Validator finite(check_scale_value, /*validator_desc=*/"", "finite");
  cmd.add_option("--open", flags.open_value,
                 "Value that `open` writes, overriding the spec's `scale open = ...` (finite)")
      ->check(finite);
  cmd.add_option("--close", flags.close_value,
                 "Value that `close` writes, overriding the spec's `scale close = ...` (finite)")
      ->check(finite);
  cmd.add_option("--max-bytes", flags.max_bytes,
                 "Refuse masks that would take more than this in memory (compile, show: float32 "
                 "mask and int32 provenance, 8 bytes a cell; validate: the mask, 4), whether "
                 "compiled from a spec or read from a tensor file, e.g. 500M, 2GiB (units are "
                 "powers of 1024; default 4GiB, at most 64GiB)")
      ->transform(CLI::Validator(transform_max_bytes, /*validator_desc=*/"", "size"))
      ->type_name("SIZE");
}

CompileOptions compile_options(const SpecFlags& flags) {
  CompileOptions options;
  for (const std::string& define : flags.defines) {
    const size_t eq = define.find('=');
    const std::string name = define.substr(0, eq);
    const auto [it, inserted] = options.defines.emplace(name, define.substr(eq + 1));
    if (!inserted) {
      throw CLI::ValidationError(
          "-D", fmt::format("parameter {} is given twice ({} and {}); give each parameter once",
                            name, quote_input(name + "=" + it->second), quote_input(define)));
    }
  }
  for (const std::string& digits : flags.digits) {
    const size_t eq = digits.find('=');
    const std::string span = digits.substr(0, eq);
    const auto order = *parse_digit_order(std::string_view(digits).substr(eq + 1));
    if (!options.digit_orders.emplace(span, order).second) {
      throw CLI::ValidationError(
          "--digits", fmt::format("span {} is given twice; give each span's order once", span));
    }
  }
  options.open_value = flags.open_value;
  options.close_value = flags.close_value;
  options.max_bytes = flags.max_bytes;
  return options;
}

void print_warnings(const CompiledMask& mask, std::ostream& out) {
  for (const Diagnostic& warning : mask.warnings) out << format_diagnostic(warning) << '\n';
}

void check_output_is_not_input(const std::string& input, const std::string& output,
                               const std::string& flag) {
  struct stat in {};
  struct stat out {};
  bool same = ::stat(input.c_str(), &in) == 0 && ::stat(output.c_str(), &out) == 0 &&
              in.st_dev == out.st_dev && in.st_ino == out.st_ino;
  if (!same) {
    std::error_code in_error, out_error;
    const auto in_path = std::filesystem::weakly_canonical(input, in_error);
    const auto out_path = std::filesystem::weakly_canonical(output, out_error);
    same = !in_error && !out_error && in_path == out_path;
  }
  if (same) {
    throw InputError(fmt::format(
        "{} {} is the input {} itself; refusing to overwrite it (choose another output file)", flag,
        quote_input(output), quote_input(input)));
  }
}

bool is_spec_path(const std::string& path) {
  return path.size() >= 5 && path.substr(path.size() - 5) == ".mask";
}

CompiledMask load_spec_or_mask_file(const std::string& path, const SpecFlags& flags,
                                    std::ostream& warnings) {
  if (!is_spec_path(path)) return read_mask_file(path, flags.max_bytes);
  CompiledMask mask = compile_file(path, compile_options(flags));
  print_warnings(mask, warnings);
  return mask;
}

}  // namespace maskprior::cli
