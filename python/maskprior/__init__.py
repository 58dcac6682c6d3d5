"""maskprior: compile `.mask` specs to attention-mask logits, read mask files, validate specs.

The same C++ compiler and validator as `maskc`, in-process:

    import maskprior
    c = maskprior.compile("specs/gotu/parity2.mask", params={"n": 6})
    c.mask          # float32 [L, H, N, N], a read-only NumPy view (no copy)
    c.hard          # bool [N, N] or None
    c.layout        # [{"name", "offset", "length", "grid", "digits"}, ...]
    c.save("parity2.safetensors")
    maskprior.validate("specs/gotu/parity2.mask", task="parity2")   # maskc validate --json

`maskprior.torch` (needs PyTorch) turns a CompiledMask into a learnable attention bias.
"""
import json
import os

from ._maskprior import CompiledMask, InputError, SpecError
from . import _maskprior

__all__ = ["CompiledMask", "InputError", "SpecError", "compile", "load", "validate"]



def _define_text(name, value):
    """The text of `-D name=value` for one params entry (an int, a float, or expression text)."""
    if isinstance(value, bool):
        raise TypeError("params[%r]: expected an int or a float, got a bool" % name)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return value
    raise TypeError("params[%r]: expected an int or a float, got %s" % (name, type(value).__name__))


def _defines(params):
    return {str(name): _define_text(name, value) for name, value in (params or {}).items()}


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

    params overrides `param` declarations (`maskc compile -D name=value`); open/close override
    the spec's `scale` (`--open/--close`); max_bytes caps mask + provenance (default 4 GiB, at
    most 64 GiB; the work limits grow with it). Raises SpecError (with .file, .line, .column,
    .message) for a malformed spec, InputError for an unreadable file, a size over the cap or a
    max_bytes over 64 GiB. Ctrl-C stops a long compile with KeyboardInterrupt.
    """
    defines = _defines(params)
    if _is_path(spec):
        return _maskprior.compile_file(os.fspath(spec), defines, open, close, max_bytes)
    return _maskprior.compile_source(spec, "<string>", defines, open, close, max_bytes)


def load(path, *, max_bytes=None):
    """Reads a compiled mask file (`maskc compile` output: safetensors, or npy with the mask only)."""
    return _maskprior.load(os.fspath(path), max_bytes)


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
