"""maskprior: compile `.mask` specs to attention-mask logits, read mask files, validate specs.

The same C++ compiler and validator as `maskc`, in-process:

    import maskprior
    c = maskprior.compile("specs/gotu/parity2.mask", params={"n": 6})
    c.mask          # float32 [L, H, N, N], a read-only NumPy view (no copy)
    c.hard          # bool [N, N] or None
    c.layout        # [{"name", "offset", "length", "grid", "digits"}, ...]
    c.save("parity2.safetensors")
    maskprior.validate("specs/gotu/parity2.mask", task="parity2")   # maskc validate --json

`maskprior.torch` (needs PyTorch) turns a CompiledMask into a learnable attention bias and holds
maskc's model (MaskedTransformer); `maskprior.load_run(DIR)` rebuilds a finished run's model;
`maskprior.export` hands a mask to FlexAttention, SDPA, Hugging Face and JAX (docs/python.md).
"""
import collections.abc
import json
import math
import numbers
import os
import tempfile

from ._maskprior import CompiledMask, InputError, SpecError
from . import _maskprior

__all__ = ["CompiledMask", "InputError", "SpecError", "compile", "load", "validate",
           "read_safetensors", "load_run", "test_metrics"]



def _input_error(message):
    """An InputError raised here, with the attributes of one raised by the module."""
    error = InputError(message)
    error.file = error.line = error.column = None
    error.message = message
    return error


def _define_text(name, value):
    """The text of one params entry: an int, or a float that is finite. Anything else (a bool, a
    str, None) is a TypeError naming the parameter: params are numbers, not expression text."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError("params[%r]: expected an int or a float, got %s"
                        % (name, type(value).__name__))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    value = float(value)
    if not math.isfinite(value):
        raise _input_error("params[%r] is %r; a parameter must be a finite number" % (name, value))
    return repr(value)


def _defines(params):
    if params is None:
        return {}
    if not isinstance(params, collections.abc.Mapping):
        raise TypeError("params: expected a dict of parameter values, got %s"
                        % type(params).__name__)
    defines = {}
    for name, value in params.items():
        if not isinstance(name, str):
            raise TypeError("params: parameter names are str, got %r" % (name,))
        defines[name] = _define_text(name, value)
    return defines


def _max_bytes(value):
    """max_bytes as the module takes it: None, or a whole number of bytes from 0 (TypeError for
    another type, InputError for a negative number; the module checks the 64 GiB ceiling)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError("max_bytes: expected an int (bytes) or None, got %s"
                        % type(value).__name__)
    if value < 0:
        raise _input_error("max_bytes is %d; it must be a number of bytes from 0 to 64 GiB"
                           % value)
    return int(value)


def _compiled_mask_from_file_bytes(data):
    """A CompiledMask from the bytes of its safetensors file (unpickling, copy.deepcopy)."""
    fd, path = tempfile.mkstemp(suffix=".safetensors")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return _maskprior.load(path, None)
    finally:
        os.unlink(path)


def _reduce_compiled_mask(mask):
    """pickle and copy: a CompiledMask travels as its safetensors file (`maskc compile -o`), which
    holds everything but the compiler's warnings."""
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "mask.safetensors")
    try:
        mask.save(path)
        with open(path, "rb") as f:
            return _compiled_mask_from_file_bytes, (f.read(),)
    finally:
        if os.path.exists(path):
            os.unlink(path)
        os.rmdir(folder)


CompiledMask.__reduce__ = _reduce_compiled_mask


def _is_path(spec):
    """A path-like object, or a one-line str that names an existing file system entry or ends in
    `.mask` (so that a mistyped file name is "cannot read spec", not a syntax error); any other
    str is spec text."""
    if isinstance(spec, os.PathLike):
        return True
    if not isinstance(spec, str):
        raise TypeError("spec: expected spec text or a path, got %s" % type(spec).__name__)
    if "\n" in spec or "\0" in spec:
        return False
    return spec.endswith(".mask") or os.path.exists(spec)


def compile(spec, *, params=None, open=None, close=None, max_bytes=None):
    """Compiles a spec: a path (str or os.PathLike) of a .mask file, or else spec text.

    params overrides `param` declarations: {name: int or float} (`maskc compile -D name=value`;
    any other type is a TypeError); open/close override the spec's `scale` (finite, at most
    3.4e38 in magnitude: the mask is float32); max_bytes caps mask + provenance (default 4 GiB,
    at most 64 GiB; the work limits grow with it). Raises SpecError (with .file, .line, .column,
    .message, .source_line) for a malformed spec, InputError (with .file and .line, None where
    unknown, and .message) for an unreadable file, a parameter the spec lacks, a size over the
    cap, an open or close value that is not a finite float32, or a max_bytes over 64 GiB.
    Ctrl-C stops a long compile with KeyboardInterrupt.
    """
    defines = _defines(params)
    max_bytes = _max_bytes(max_bytes)
    if _is_path(spec):
        return _maskprior.compile_file(os.fspath(spec), defines, open, close, max_bytes)
    return _maskprior.compile_source(spec, "<string>", defines, open, close, max_bytes)


def load(path, *, max_bytes=None):
    """Reads a compiled mask file (`maskc compile` output: safetensors, or npy with the mask only)."""
    return _maskprior.load(os.fspath(path), _max_bytes(max_bytes))


def validate(spec, *, task=None, truth_table=None, depends=None, depth=None, readout=None,
             feedback="token", params=None):
    """The report of `maskc validate SPEC (--task T | --truth-table CSV | --depends D) --json`.

    spec is a path, spec text or a CompiledMask. depends (declared dependencies, as
    `--depends` takes them: "c[i]: a[..i+1]") and readout (a token, a span or "before SPAN") are
    a string or a list of them; feedback is "token" or "state" (`--feedback`). Returns a dict.
    """
    mask = spec if isinstance(spec, CompiledMask) else compile(spec, params=params)
    if isinstance(readout, str):
        readout = [readout]
    if isinstance(depends, str):
        depends = [depends]
    table = None if truth_table is None else os.fspath(truth_table)
    return json.loads(_maskprior.validate_json(mask, task, table, list(depends or []), depth,
                                               list(readout or []), feedback))


def read_safetensors(path, *, max_bytes=None):
    """A safetensors file, read and validated by maskc's own reader (no `safetensors` package
    needed): ({name: (dtype, NumPy array)}, {metadata key: str}). dtype is the file's name of it
    ("F32", "I64", "U8", ...); BF16 arrays hold the raw bits as uint16."""
    return _maskprior.read_safetensors(os.fspath(path), _max_bytes(max_bytes))


def load_run(path, *, device="cpu"):
    """The model of a finished `maskc train` run (folder `path`) as a maskprior.torch
    MaskedTransformer with the run's settings and weights, in evaluation mode (needs PyTorch;
    see maskprior.run.load_run)."""
    from .run import load_run as load
    return load(path, device=device)


def test_metrics(model, rows, info=None):
    """The run's test metrics recomputed in Python from `maskc train --save-test-rows`'s
    test_rows.safetensors (rows: a run folder, or what maskprior.run.load_test_rows gives);
    see maskprior.run.test_metrics."""
    from .run import test_metrics as metrics
    return metrics(model, rows, info)


def __dir__():
    """dir(maskprior): the public names and the submodules, not the modules this one imports."""
    return sorted(set(__all__) | {"torch", "export"})
