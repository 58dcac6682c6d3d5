"""A finished `maskc train` run in Python: its model rebuilt from weights.safetensors and
config.json (maskprior.load_run), and its test metrics recomputed from test_rows.safetensors
(written by `maskc train --save-test-rows`). Needs PyTorch; the files are read with maskprior's
own safetensors reader (maskprior.read_safetensors), the same as maskc's."""
import json
import numbers
import os
import re
import stat

import numpy as np
import torch
import torch.nn.functional as F

from . import _input_error, _maskprior, read_safetensors
from .torch import MaskedTransformer

# The most bytes of a run's config.json or summary.json read (maskc's io/json_file.h reads the
# same).
_MAX_JSON_BYTES = 64 << 20

__all__ = ["load_run", "test_metrics", "load_test_rows"]

# The run folder's file names, as maskc spells them (runfolder/run_files.h).
_CONFIG = _maskprior.RUN_FILES["config"]
_SUMMARY = _maskprior.RUN_FILES["summary"]
_WEIGHTS = _maskprior.RUN_FILES["weights"]
_TEST_ROWS = _maskprior.RUN_FILES["test_rows"]


def _torch_tensors(path):
    tensors, metadata = read_safetensors(path)
    out = {}
    for name, (dtype, array) in tensors.items():
        t = torch.from_numpy(np.ascontiguousarray(array))
        out[name] = t.view(torch.bfloat16) if dtype == "BF16" else t
    return out, metadata


def _read_json(path):
    """A run's JSON file, or None when there is none. InputError naming the file for one that is
    not a regular file (a FIFO is opened without waiting for a writer, then refused), too large,
    not UTF-8, not JSON or nested too deep."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as e:
        raise _input_error("%s: cannot open it: %s" % (path, e.strerror)) from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _input_error("%s is not a regular file" % path)
        data = f.read(_MAX_JSON_BYTES + 1)
    if len(data) > _MAX_JSON_BYTES:
        raise _input_error("%s is larger than %d MiB" % (path, _MAX_JSON_BYTES >> 20))
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise _input_error("%s is not UTF-8 text (byte %d)" % (path, e.start)) from None
    except RecursionError:
        raise _input_error("%s: JSON nested too deep" % path) from None
    except ValueError as e:
        raise _input_error("%s: not valid JSON: %s" % (path, e)) from None


def _check_sizes(config, config_path):
    """InputError unless the config's model sizes are positive whole numbers."""
    for key in ("depth", "heads", "head_dim", "mlp"):
        value = config.get(key)
        if key in config and (isinstance(value, bool) or not isinstance(value, numbers.Integral)
                              or value < 1):
            raise _input_error("%s: %s is %s; it must be a whole number of at least 1"
                               % (config_path, key, json.dumps(value)))


def _check_against_weights(settings, tensors, config_path, weights_path):
    """Builds the model on PyTorch's meta device (nothing allocated) and holds its tensors'
    shapes against the weights file's: InputError naming the first that differs, so that a
    config.json that says `depth` 1e8 is refused before a model of that depth is built (the
    depth first, from the blocks the file holds: even on the meta device each block is an
    object)."""
    blocks = {name.split(".", 1)[0] for name in tensors if re.match(r"block\d+\.", name)}
    if settings.get("depth", len(blocks)) != len(blocks):
        raise _input_error("%s: depth is %s, but %s holds %d blocks: they are not of one model"
                           % (config_path, settings["depth"], weights_path, len(blocks)))
    try:
        with torch.device("meta"):
            probe = MaskedTransformer(**settings)
    except (TypeError, ValueError, RuntimeError) as e:
        raise _input_error("%s: its settings build no model: %s" % (config_path, e)) from None
    expected = {name: tuple(t.shape) for name, t in probe.state_dict().items()}
    for name, shape in expected.items():
        if name not in tensors:
            raise _input_error("%s describes a model with %s, which %s does not hold: they are not "
                               "of one model" % (config_path, name, weights_path))
        if tuple(tensors[name].shape) != shape:
            raise _input_error("%s describes %s as %s, but %s holds it as %s: they are not of one "
                               "model" % (config_path, name, list(shape), weights_path,
                                          list(tensors[name].shape)))
    extra = sorted(set(tensors) - set(expected) - {"mask", "mask_init", "hard", "causal"})
    if extra:
        raise _input_error("%s holds %s, which the model %s describes has not: they are not of one "
                           "model" % (weights_path, extra[0], config_path))


def _settings(tensors, config):
    """MaskedTransformer's arguments for a run's tensors and config: vocab, length, readout and
    patch width from the tensors' shapes, the rest from the config."""
    seq_len, dim = tensors["position_embedding"].shape
    patches = "patch_embedding.weight" in tensors
    outputs = tensors["head.weight"].shape[0]
    readout = ("causal_lm" if "causal" in tensors else
               "cls_regression" if outputs == 1 and not patches else "cls_classify")
    features = int(tensors["patch_embedding.weight"].shape[1]) if patches else 0
    settings = dict(seq_len=int(seq_len), dim=int(dim), readout=readout,
                    classes=int(outputs) if readout == "cls_classify" else 0,
                    patch_features=features,
                    vocab=int(tensors["token_embedding.weight"].shape[0]) if not patches else 0)
    for key in ("depth", "heads", "head_dim", "mlp", "pos_embedding", "pos_init_std", "norm",
                "attn_dropout", "resid_dropout", "activation", "qk_norm", "mlp_dropout",
                "qkv_bias", "attn_init", "final_norm"):
        if key in config:
            settings[key] = config[key]
    return settings


def _runs_below(path, depth=4, most=5):
    """Run folders (holding a config.json) under `path`, at most `depth` levels down: the first
    `most` of them, as paths relative to `path`, and whether there were more."""
    found = []
    base = path.rstrip(os.sep).count(os.sep)
    for folder, subfolders, files in os.walk(path):
        subfolders.sort()
        if folder.count(os.sep) - base >= depth:
            subfolders[:] = []
        if folder != path and _CONFIG in files:
            if len(found) == most:
                return found, True
            found.append(os.path.relpath(folder, path))
            subfolders[:] = []
    return found, False


def _check_run_folder(path):
    """InputError with the next step when `path` is not a finished run's folder: a missing
    folder, a folder of runs (a sweep's or a reproduce's --out), a run not finished yet."""
    if os.path.exists(os.path.join(path, _WEIGHTS)):
        return
    if not os.path.isdir(path):
        raise _input_error("%s: no such run folder (a `maskc train --out` folder)" % path)
    if os.path.exists(os.path.join(path, _CONFIG)):
        raise _input_error(
            "%s: the run has not finished (no weights.safetensors yet): load it once `maskc train` "
            "has ended, or continue it with `maskc train --resume %s`" % (path, path))
    runs, more = _runs_below(path)
    if runs:
        raise _input_error(
            "%s is a folder of runs (a `maskc sweep` or `maskc reproduce` --out), not one run: "
            "load one of them, e.g. maskprior.load_run(%r); its runs: %s%s"
            % (path, os.path.join(path, runs[0]), ", ".join(runs), ", ..." if more else ""))
    raise _input_error("%s holds no run: no weights.safetensors or config.json (a `maskc train "
                       "--out` folder)" % path)


def load_run(path, *, device="cpu"):
    """The model of the finished run in folder `path` (`maskc train --out path`), with its trained
    weights, in evaluation mode: a maskprior.torch.MaskedTransformer whose settings are the
    run's (config.json). Its prior M, when the run has one, is `model.mask` (a parameter unless
    the run's init was mask-fixed), `model.mask_init` the M it started from. The run's config,
    summary (None for an unfinished run) and folder are `model.run_config`, `model.run_summary`
    and `model.run_path`. InputError naming the file for a missing or corrupt weights file, a
    config.json or summary.json that is not a regular file (a FIFO) or not JSON, and a config whose
    model the weights do not fit (checked on the meta device, before the model is built)."""
    path = os.fspath(path)
    _check_run_folder(path)
    weights_path = os.path.join(path, _WEIGHTS)
    tensors, metadata = _torch_tensors(weights_path)
    config_path = os.path.join(path, _CONFIG)
    config = _read_json(config_path)
    if config is None:
        config_path = "%s (its metadata 'config')" % weights_path
        try:
            config = json.loads(metadata.get("config", "{}"))
        except (ValueError, RecursionError) as e:
            raise _input_error("%s: not valid JSON: %s" % (config_path, e)) from None
    if not isinstance(config, dict):
        raise _input_error("%s: not a JSON object" % config_path)
    if any(name.startswith("prior_values_") or name == "rule_offsets" for name in tensors):
        raise ValueError(
            "%s is a run over several sizes (docs/settings.md, \"Sizes\"): its model holds a prior "
            "per size, which the Python model does not load; its learned rules are in "
            "summary.json's learned_rules, and `maskc distill %s --from mask` writes them back "
            "as a spec" % (path, path))
    for name in ("position_embedding", "head.weight"):
        if name not in tensors:
            raise _input_error("%s has no %s: not the weights of a maskc run"
                               % (weights_path, name))
    _check_sizes(config, config_path)
    settings = _settings(tensors, config)
    _check_against_weights(settings, tensors, config_path, weights_path)
    model = MaskedTransformer(**settings)
    if "mask" in tensors:
        model.set_mask(tensors["mask"].float(), learnable=config.get("init") != "mask-fixed")
    if "hard" in tensors:
        model.set_hard_mask(tensors["hard"].bool())
    for name in ("hard", "causal"):
        if name in tensors:
            tensors[name] = tensors[name].bool()
    model.load_state_dict(tensors, strict=True)
    resolved = config.get("resolved", {})
    if "mask_open" in resolved and model.mask is not None:
        model.open_value, model.close_value = resolved["mask_open"], resolved["mask_close"]
    model.run_summary = _read_json(os.path.join(path, _SUMMARY))
    model.run_config, model.run_path = config, path
    return model.to(device).eval()


def load_test_rows(path):
    """The test rows of run folder `path` (test_rows.safetensors, `maskc train --save-test-rows`):
    ({"inputs", "targets", "seen" as the family has them}, info), info saying what the metric
    does with them ({"loss": "mse" | "cross_entropy" | "next_token" | "answer", ...})."""
    path = os.fspath(path)
    rows_path = os.path.join(path, _TEST_ROWS)
    if os.path.isdir(path) and not os.path.exists(rows_path):
        raise _input_error(
            "%s: no test_rows.safetensors: the run did not save its test rows; train it again "
            "with `maskc train --save-test-rows`" % path)
    tensors, metadata = _torch_tensors(rows_path)
    return tensors, json.loads(metadata["info"])


def _in_chunks(model, inputs, rows=256):
    with torch.no_grad():
        return torch.cat([model(inputs[i:i + rows]) for i in range(0, inputs.shape[0], rows)])


def test_metrics(model, rows, info=None):
    """The test metrics that `maskc train` reports, recomputed in Python: rows and info as
    load_test_rows gives them (or a run folder). Returns {"test_loss", "predictions"} (for "mse":
    {"seen_mse", "unseen_mse", "predictions"}); predictions are the model's outputs (regression),
    class or next-token argmaxes, or the answer tokens (teacher-forced argmax)."""
    if info is None:
        rows, info = load_test_rows(rows)
    device = next(model.parameters()).device
    inputs = rows["inputs"].to(device)
    inputs = inputs.float() if model.patch_features > 0 else inputs.long()
    out = _in_chunks(model, inputs).double()
    kind = info["loss"]
    if kind == "mse":
        squared = (out - rows["targets"].to(device).double()).pow(2)
        seen = rows["seen"].to(device).bool()
        mean = (lambda where: squared[where].mean().item() if where.any() else None)
        return {"seen_mse": mean(seen), "unseen_mse": mean(~seen), "predictions": out}
    if kind == "answer":
        first, length = info["answer_offset"], info["answer_length"]
        out, targets = out[:, first - 1:first - 1 + length], inputs[:, first:first + length]
    else:
        targets = rows["targets"].to(device).long()
    loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), targets.reshape(-1))
    return {"test_loss": loss.item(), "predictions": out.argmax(-1)}
