"""A finished `maskc train` run in Python: its model rebuilt from weights.safetensors and
config.json (maskprior.load_run), and its test metrics recomputed from test_rows.safetensors
(written by `maskc train --save-test-rows`). Needs PyTorch; the files are read with maskprior's
own safetensors reader (maskprior.read_safetensors), the same as maskc's."""
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

from . import read_safetensors
from .torch import MaskedTransformer

__all__ = ["load_run", "test_metrics", "load_test_rows"]


def _torch_tensors(path):
    tensors, metadata = read_safetensors(path)
    out = {}
    for name, (dtype, array) in tensors.items():
        t = torch.from_numpy(np.ascontiguousarray(array))
        out[name] = t.view(torch.bfloat16) if dtype == "BF16" else t
    return out, metadata


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
                "attn_dropout", "resid_dropout", "activation", "qk_norm"):
        if key in config:
            settings[key] = config[key]
    return settings


def load_run(path, *, device="cpu"):
    """The model of the finished run in folder `path` (`maskc train --out path`), with its trained
    weights, in evaluation mode: a maskprior.torch.MaskedTransformer whose settings are the
    run's (config.json). Its prior M, when the run has one, is `model.mask` (a parameter unless
    the run's init was mask-fixed), `model.mask_init` the M it started from. The run's config,
    summary (None for an unfinished run) and folder are `model.run_config`, `model.run_summary`
    and `model.run_path`. InputError (from the reader) for a missing or corrupt weights file."""
    path = os.fspath(path)
    tensors, metadata = _torch_tensors(os.path.join(path, "weights.safetensors"))
    config_path = os.path.join(path, "config.json")
    if os.path.exists(config_path):
        with open(config_path) as f:
            config = json.load(f)
    else:
        config = json.loads(metadata.get("config", "{}"))
    if any(name.startswith("prior_values_") or name == "rule_offsets" for name in tensors):
        raise ValueError(
            "%s is a run over several sizes (docs/settings.md, \"Sizes\"): its model holds a prior "
            "per size, which the Python model does not load; its learned rules are in "
            "summary.json's learned_rules, and `maskc distill %s --from mask` writes them back "
            "as a spec" % (path, path))
    model = MaskedTransformer(**_settings(tensors, config))
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
    summary_path = os.path.join(path, "summary.json")
    model.run_summary = None
    if os.path.exists(summary_path):
        with open(summary_path) as f:
            model.run_summary = json.load(f)
    model.run_config, model.run_path = config, path
    return model.to(device).eval()


def load_test_rows(path):
    """The test rows of run folder `path` (test_rows.safetensors, `maskc train --save-test-rows`):
    ({"inputs", "targets", "seen" as the family has them}, info), info saying what the metric
    does with them ({"loss": "mse" | "cross_entropy" | "next_token" | "answer", ...})."""
    tensors, metadata = _torch_tensors(os.path.join(os.fspath(path), "test_rows.safetensors"))
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
