// The extension module maskprior._maskprior: the compiler, the mask files and the validator of
// maskprior for Python. python/maskprior/__init__.py is the public face (it decides whether a
// string is a path or spec text, converts params and parses the validator's JSON).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "core/cells.h"
#include "core/compiled_mask.h"
#include "core/error.h"
#include "io/mask_file.h"
#include "io/safetensors.h"
#include "runfolder/run_files.h"
#include "validate/validate.h"

namespace py = pybind11;

namespace maskprior::python {
namespace {

// The exception types, created once at import and kept for the life of the interpreter.
PyObject* spec_error_type = nullptr;
PyObject* input_error_type = nullptr;

/// `text` as a Python str. C++ strings hold bytes, not necessarily UTF-8 (a spec or path may have
/// any): bytes that are not UTF-8 become `\xHH` (errors="backslashreplace") in text shown to
/// people, and surrogates (errors="surrogateescape", as os.fsdecode does) in a file name, so that
/// it names the same file again.
py::str python_text(const std::string& text, const char* errors = "backslashreplace") {
  PyObject* decoded =
      PyUnicode_DecodeUTF8(text.data(), static_cast<py::ssize_t>(text.size()), errors);
  if (decoded == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(decoded);
}

/// An error's place as Python attributes .file, .line and .column: None where unknown.
void set_location(py::object& error, const SourceLocation& where) {
  const auto number = [](int n) {
    return n > 0 ? py::object(py::int_(n)) : py::object(py::none());
  };
  error.attr("file") = where.file.empty() ? py::object(py::none())
                                          : py::object(python_text(where.file, "surrogateescape"));
  error.attr("line") = number(where.line);
  error.attr("column") = number(where.column);
}

void raise_spec_error(const SpecError& e) {
  const Diagnostic& d = e.diagnostic();
  py::object error = py::reinterpret_borrow<py::object>(spec_error_type)(python_text(e.what()));
  set_location(error, d.where);
  error.attr("message") = python_text(d.message);
  error.attr("source_line") = python_text(d.source_line);
  PyErr_SetObject(spec_error_type, error.ptr());
}

void raise_input_error(const InputError& e) {
  py::object error = py::reinterpret_borrow<py::object>(input_error_type)(python_text(e.what()));
  set_location(error, e.where());
  error.attr("message") = python_text(e.what());
  PyErr_SetObject(input_error_type, error.ptr());
}

void translate_errors(std::exception_ptr error) {
  try {
    if (error) std::rethrow_exception(error);
  } catch (const SpecError& e) {
    raise_spec_error(e);
  } catch (const InputError& e) {
    raise_input_error(e);
  }
}

/// `max_bytes` as given, or `fallback`; over kMaxBytesCeiling (the cap of `maskc --max-bytes`)
/// is an InputError: a cap, not a way to switch it and the work limits off.
uint64_t checked_max_bytes(std::optional<uint64_t> max_bytes, uint64_t fallback) {
  if (max_bytes && *max_bytes > kMaxBytesCeiling) {
    throw InputError("max_bytes is " + std::to_string(*max_bytes) + "; it may be at most 64 GiB (" +
                     std::to_string(kMaxBytesCeiling) + " bytes)");
  }
  return max_bytes.value_or(fallback);
}

/// Thrown by the cancellation hook when a Python signal handler raised (Ctrl-C: KeyboardInterrupt);
/// the Python exception stays set, to be raised once the binding holds the GIL again.
struct Cancelled {};

/// CompileOptions::check_cancelled for a compile run from Python with the GIL released: at most
/// every 50 ms it takes the GIL and runs the interpreter's pending signal handlers.
std::function<void()> python_cancellation() {
  using Clock = std::chrono::steady_clock;
  auto last = std::make_shared<Clock::time_point>(Clock::now());
  return [last] {
    const auto now = Clock::now();
    if (now - *last < std::chrono::milliseconds(50)) return;
    *last = now;
    const py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw Cancelled{};
  };
}

CompileOptions make_options(const std::map<std::string, std::string>& defines,
                            std::optional<double> open_value, std::optional<double> close_value,
                            std::optional<uint64_t> max_bytes) {
  CompileOptions options;
  options.defines = defines;
  options.name_define = [](const std::string& name) { return "params['" + name + "']"; };
  options.open_value = open_value;
  options.close_value = close_value;
  options.max_bytes = checked_max_bytes(max_bytes, options.max_bytes);
  options.check_cancelled = python_cancellation();
  return options;
}

/// Runs `compile` (a compile with the options of make_options) without the GIL, so that other
/// threads run and Ctrl-C is seen: KeyboardInterrupt (or whatever a signal handler raised) stops
/// it.
CompiledMask compile_interruptibly(const std::function<CompiledMask()>& compile) {
  try {
    const py::gil_scoped_release release;
    return compile();
  } catch (const Cancelled&) {
    throw py::error_already_set();  // the GIL is held again: the handler's exception
  }
}

std::vector<py::ssize_t> tensor_shape(const CompiledMask& m) {
  return {static_cast<py::ssize_t>(m.layers), static_cast<py::ssize_t>(m.heads),
          static_cast<py::ssize_t>(m.n), static_cast<py::ssize_t>(m.n)};
}

/// A read-only NumPy view of `data` (owned by the CompiledMask `self`, which the array keeps alive
/// as its base): no copy.
template <class T>
py::array read_only_view(const std::vector<py::ssize_t>& shape, const T* data,
                         const py::object& self) {
  py::array_t<T> array(shape, data, self);
  array.attr("flags").attr("writeable") = false;
  return array;
}

py::list layout_list(const Layout& layout) {
  py::list spans;
  for (const Span& span : layout.spans) {
    py::dict entry;
    entry["name"] = span.name;
    entry["offset"] = span.offset;
    entry["length"] = span.length;
    entry["grid"] = span.grid ? py::object(py::make_tuple(span.grid->first, span.grid->second))
                              : py::object(py::none());
    entry["digits"] = !span.digits                            ? py::object(py::none())
                      : *span.digits == DigitOrder::kLsbFirst ? py::object(py::str("lsb_first"))
                                                              : py::object(py::str("msb_first"));
    spans.append(entry);
  }
  return spans;
}

/// The resolved parameters: a whole value (n = 15) as an int, any other as a float.
py::dict params_dict(const std::map<std::string, double>& params) {
  py::dict out;
  for (const auto& [name, value] : params) {
    const bool whole =
        std::isfinite(value) && std::trunc(value) == value && std::abs(value) < 0x1p53;
    out[python_text(name)] =
        whole ? py::object(py::int_(static_cast<int64_t>(value))) : py::object(py::float_(value));
  }
  return out;
}

py::dict metadata_dict(const CompiledMask& m) {
  py::dict metadata;
  metadata["name"] = m.name;
  metadata["source_sha256"] = m.source_sha256;
  metadata["open"] = m.open_value;
  metadata["close"] = m.close_value;
  metadata["params"] = params_dict(m.params);
  metadata["layers"] = m.layers;
  metadata["heads"] = m.heads;
  metadata["n"] = m.n;
  return metadata;
}

py::list warning_list(const CompiledMask& m) {
  py::list warnings;
  for (const Diagnostic& warning : m.warnings) warnings.append(format_diagnostic(warning));
  return warnings;
}

TensorFormat tensor_format(const std::string& format) {
  if (format == "safetensors") return TensorFormat::kSafetensors;
  if (format == "npy") return TensorFormat::kNpy;
  throw InputError("format must be 'safetensors' or 'npy', got " + quote_input(format));
}

/// The report of `maskc validate --json` for a compiled mask (the same functions, the same JSON).
std::string validate_json(const CompiledMask& mask, const std::optional<std::string>& task,
                          const std::optional<std::string>& truth_table,
                          const std::vector<std::string>& depends, std::optional<int64_t> depth,
                          const std::vector<std::string>& readout, const std::string& feedback) {
  validate::ValidateOptions options;
  options.depth = depth;
  options.readout = readout;
  // Messages name validate()'s arguments (`readout="before SPAN"`), not maskc's flags.
  options.name_setting = [](std::string_view key, std::string_view value) {
    return value.empty() ? std::string(key) : std::string(key) + "=" + std::string(value);
  };
  const std::optional<validate::Feedback> rule = validate::parse_feedback(feedback);
  if (!rule) {
    throw InputError("feedback must be 'token' or 'state', got " + quote_input(feedback));
  }
  options.feedback = *rule;
  const validate::Target target = validate::target_of(mask, task, truth_table, depends, options);
  return validate::report_json(validate::validate_target(mask, target, options));
}

/// The NumPy dtype of a safetensors dtype name; BF16 (which NumPy lacks) is read as its raw
/// uint16 bits (maskprior.read_safetensors views them as torch.bfloat16).
py::dtype numpy_dtype(const std::string& dtype) {
  static const std::map<std::string, std::string> kNames = {
      {"BOOL", "bool"},  {"U8", "uint8"},    {"I8", "int8"},     {"I16", "int16"},
      {"U16", "uint16"}, {"F16", "float16"}, {"BF16", "uint16"}, {"I32", "int32"},
      {"U32", "uint32"}, {"F32", "float32"}, {"I64", "int64"},   {"U64", "uint64"},
      {"F64", "float64"}};
  const auto found = kNames.find(dtype);
  if (found == kNames.end()) throw InputError("unknown safetensors dtype " + quote_input(dtype));
  return py::dtype(found->second);
}

/// A safetensors file as ({name: (dtype name, NumPy array)}, {metadata key: value}): the same
/// validating reader as maskc's (io/safetensors.h), the arrays little-endian copies.
py::tuple read_safetensors_file(const std::string& path, std::optional<uint64_t> max_bytes) {
  const uint64_t cap = max_bytes.value_or(kNoByteLimit);
  SafetensorsData data;
  {
    const py::gil_scoped_release release;
    data = read_safetensors(path, cap);
  }
  py::dict tensors;
  for (auto& [name, tensor] : data.tensors) {
    py::array array(numpy_dtype(tensor.dtype), tensor.shape);
    std::copy(tensor.bytes.begin(), tensor.bytes.end(),
              static_cast<uint8_t*>(array.mutable_data()));
    tensors[python_text(name)] = py::make_tuple(tensor.dtype, array);
  }
  py::dict metadata;
  for (const auto& [key, value] : data.metadata) metadata[python_text(key)] = python_text(value);
  return py::make_tuple(tensors, metadata);
}

void bind_compiled_mask(py::module_& m) {
  py::class_<CompiledMask>(m, "CompiledMask", "A compiled .mask spec (see maskprior.compile).")
      .def_property_readonly(
          "mask",
          [](const py::object& self) {
            const auto& c = self.cast<const CompiledMask&>();
            return read_only_view(tensor_shape(c), c.mask.data(), self);
          },
          "float32 [L, H, N, N] logits M (a read-only view, no copy)")
      .def_property_readonly(
          "provenance",
          [](const py::object& self) {
            const auto& c = self.cast<const CompiledMask&>();
            return read_only_view(tensor_shape(c), c.provenance.data(), self);
          },
          "int32 [L, H, N, N]: 1-based spec line of each cell's last writer, 0 = default")
      .def_property_readonly(
          "hard",
          [](const py::object& self) -> py::object {
            const auto& c = self.cast<const CompiledMask&>();
            if (!c.hard) return py::none();
            const auto n = static_cast<py::ssize_t>(c.n);
            return read_only_view<bool>({n, n}, reinterpret_cast<const bool*>(c.hard->data()),
                                        self);
          },
          "bool [N, N]: hard-excluded cells, or None when the spec has no `hard`")
      .def(
          "open_pattern",
          [](const CompiledMask& c) {
            std::vector<uint8_t> pattern = open_pattern(c);
            py::array_t<bool> out(tensor_shape(c));
            std::copy(pattern.begin(), pattern.end(), out.mutable_data());
            return out;
          },
          "bool [L, H, N, N]: not hard and nearer the open value than the close value")
      .def_property_readonly("layout", [](const CompiledMask& c) { return layout_list(c.layout); })
      .def_property_readonly("metadata", &metadata_dict)
      .def_property_readonly("warnings", &warning_list)
      .def_property_readonly("labels",
                             [](const CompiledMask& c) {
                               std::vector<std::string> labels;
                               for (int64_t t = 0; t < c.n; ++t)
                                 labels.push_back(c.layout.token_label(t));
                               return labels;
                             })
      .def_readonly("name", &CompiledMask::name)
      .def_readonly("layers", &CompiledMask::layers)
      .def_readonly("heads", &CompiledMask::heads)
      .def_readonly("n", &CompiledMask::n)
      .def(
          "save",
          [](const CompiledMask& c, const std::string& path, const std::string& format) {
            write_mask_file(c, path, tensor_format(format));
          },
          py::arg("path"), py::arg("format") = "safetensors",
          "Writes the mask as `maskc compile -o PATH` does (safetensors, or npy: the mask only)")
      .def("__repr__", [](const CompiledMask& c) {
        return "<CompiledMask " + c.name + " layers=" + std::to_string(c.layers) +
               " heads=" + std::to_string(c.heads) + " n=" + std::to_string(c.n) + ">";
      });
}

void bind_functions(py::module_& m) {
  m.def(
      "compile_source",
      [](const std::string& source, const std::string& filename,
         const std::map<std::string, std::string>& defines, std::optional<double> open_value,
         std::optional<double> close_value, std::optional<uint64_t> max_bytes) {
        const CompileOptions options = make_options(defines, open_value, close_value, max_bytes);
        return compile_interruptibly([&] { return compile_source(source, filename, options); });
      },
      py::arg("source"), py::arg("filename"), py::arg("defines"), py::arg("open"), py::arg("close"),
      py::arg("max_bytes"));
  m.def(
      "compile_file",
      [](const std::string& path, const std::map<std::string, std::string>& defines,
         std::optional<double> open_value, std::optional<double> close_value,
         std::optional<uint64_t> max_bytes) {
        const CompileOptions options = make_options(defines, open_value, close_value, max_bytes);
        return compile_interruptibly([&] { return compile_file(path, options); });
      },
      py::arg("path"), py::arg("defines"), py::arg("open"), py::arg("close"), py::arg("max_bytes"));
  m.def(
      "load",
      [](const std::string& path, std::optional<uint64_t> max_bytes) {
        const uint64_t cap = checked_max_bytes(max_bytes, kDefaultMaxMaskBytes);
        const py::gil_scoped_release release;
        return read_mask_file(path, cap);
      },
      py::arg("path"), py::arg("max_bytes") = py::none());
  m.def("read_safetensors", &read_safetensors_file, py::arg("path"),
        py::arg("max_bytes") = py::none());
  m.def("validate_json", &validate_json, py::arg("mask"), py::arg("task"), py::arg("truth_table"),
        py::arg("depends"), py::arg("depth"), py::arg("readout"), py::arg("feedback"));
}

}  // namespace
}  // namespace maskprior::python

PYBIND11_MODULE(_maskprior, m) {
  using namespace maskprior::python;
  m.doc() = "maskprior's compiler, mask files and validator (use the package maskprior)";
  spec_error_type = PyErr_NewException("maskprior.SpecError", PyExc_ValueError, nullptr);
  input_error_type = PyErr_NewException("maskprior.InputError", PyExc_ValueError, nullptr);
  m.attr("SpecError") = py::reinterpret_borrow<py::object>(spec_error_type);
  m.attr("InputError") = py::reinterpret_borrow<py::object>(input_error_type);
  py::register_exception_translator(&translate_errors);
  bind_compiled_mask(m);
  bind_functions(m);
  // The run folder's file names, spelled once (runfolder/run_files.h): key -> file name.
  py::dict run_files;
  for (const auto& [key, name] : maskprior::runfolder::kRunFiles) {
    run_files[py::str(std::string(key))] = py::str(std::string(name));
  }
  m.attr("RUN_FILES") = run_files;
}
