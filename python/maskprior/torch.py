"""A compiled mask as a learnable attention prior in PyTorch, and maskc's model (pure Python;
needs only torch).

Attention with a mask prior is softmax(QKᵀ/√d + log σ(M)) V (Ma et al., 2026): `MaskPrior` holds
M (learnable, or a fixed buffer), spread over a model's layers and heads as the runtime's
`--mask-sharing` does, and returns the additive bias log σ(M), with −inf on the spec's hard
cells; `attend` applies it. `prior_mass` and `mask_drift` measure how much of the prior survives
training. `MaskedTransformer` is the Transformer of `maskc train` (runtime/model.h), with the
same parameter names, so `maskprior.load_run` rebuilds a finished run's model.

    from maskprior.torch import MaskPrior, attend, prior_mass
    prior = MaskPrior(maskprior.compile("specs/gotu/parity2.mask", params={"n": 6}),
                      layers=2, heads=4, sharing="head")
    prior.bias()                                   # [2, 4, N, N]
    out = attend(q, k, v, prior(layer=1))          # q, k, v: [B, 4, N, d]
"""
import math

import numbers

import numpy as np
import torch
import torch.nn.functional as F

from .model import (READOUTS, SHARINGS, MaskedTransformer, _layer_index, _open_cells,
                    share_mask)

__all__ = ["MaskPrior", "MaskedTransformer", "attend", "prior_mass", "mask_drift",
           "open_pattern", "share_mask", "SHARINGS", "READOUTS"]

def open_pattern(compiled):
    """bool [L, H, N, N]: cells that are not hard and lie nearer the open value than the close
    value (the pattern `maskc` trains against, core/cells.h `open_pattern`)."""
    if hasattr(compiled, "open_pattern") and not isinstance(compiled, torch.nn.Module):
        return torch.from_numpy(np.asarray(compiled.open_pattern()))
    mask = torch.tensor(np.asarray(compiled.mask), dtype=torch.float64)
    meta = compiled.metadata
    hard = None if compiled.hard is None else torch.from_numpy(np.asarray(compiled.hard, dtype=bool))
    return _open_cells(mask, meta["open"], meta["close"], hard)


class MaskPrior(torch.nn.Module):
    """The logits M of a CompiledMask as a parameter (or a buffer when not learnable), for a model
    of `layers` and `heads` (default: the spec's). `sharing` ("spec", "layer", "head") says how
    many M there are, as `maskc train --mask-sharing` does: "spec" keeps the spec's [L', H']
    (one M shared by every layer and head unless the spec writes per-layer or per-head masks),
    "layer" one per layer, "head" one per layer and head. bias() gives log σ(M) + (−inf on hard
    cells) for every layer and head, [layers, heads, N, N]; prior(layer) one layer's [heads, N, N]
    and prior(layer, head) one head's [N, N]."""

    def __init__(self, compiled, learnable=True, *, layers=None, heads=None, sharing="spec"):
        super().__init__()
        for name, value in (("layers", layers), ("heads", heads)):
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError("MaskPrior: %s must be a whole number, got %r" % (name, value))
            if value < 1:
                raise ValueError("MaskPrior: %s must be at least 1, got %d" % (name, value))
        m = torch.tensor(np.asarray(compiled.mask), dtype=torch.float32)
        self.model_layers = layers is not None  # else any layer reads a layer-shared M
        self.layers = int(m.shape[0] if layers is None else layers)
        self.heads = int(m.shape[1] if heads is None else heads)
        self.sharing = sharing
        m = share_mask(m, sharing, self.layers, self.heads)
        self.learnable = bool(learnable)
        if learnable:
            self.M = torch.nn.Parameter(m)
        else:
            self.register_buffer("M", m)
        self.register_buffer("M0", m.clone())
        hard = compiled.hard
        hard = torch.zeros(m.shape[-2:], dtype=torch.bool) if hard is None else torch.tensor(
            np.asarray(hard, dtype=bool))
        self.register_buffer("hard", hard)
        meta = compiled.metadata
        self.open_value, self.close_value = float(meta["open"]), float(meta["close"])

    @property
    def n(self):
        return self.M.shape[-1]

    def bias(self, layer=None):
        """log σ(M) with −inf on hard cells: [layers, heads, N, N], or [heads, N, N] of `layer`
        (broadcast views where M is shared). Without `layers` given, an M that the spec shares
        over layers serves any layer; with it, a layer outside the model is an IndexError."""
        bias = F.logsigmoid(self.M).masked_fill(self.hard, float("-inf"))
        if layer is None:
            return bias.expand(self.layers, self.heads, self.n, self.n)
        if not self.model_layers and self.M.shape[0] == 1 and layer >= 0:
            return bias[0].expand(self.heads, self.n, self.n)
        return bias[_layer_index(self.M, layer, self.layers)].expand(self.heads, self.n, self.n)

    def forward(self, layer=0, head=None):
        """One layer's bias [heads, N, N], or [N, N] of one head; −inf on hard cells."""
        bias = self.bias(layer)
        return bias if head is None else bias[head]

    def open_pattern(self):
        """bool [layers, heads, N, N]: the open cells of the spec's M (M0)."""
        pattern = _open_cells(self.M0, self.open_value, self.close_value, self.hard)
        return pattern.expand(self.layers, self.heads, self.n, self.n)

    def extra_repr(self):
        return ("M=%s %s, sharing=%s, model layers=%d heads=%d, bias=[%d, %d, %d, %d], "
                "hard cells=%d" % (list(self.M.shape), "learnable" if self.learnable else "fixed",
                                   self.sharing, self.layers, self.heads, self.layers,
                                   self.heads, self.n, self.n, int(self.hard.sum())))


def attend(q, k, v, bias):
    """softmax(QKᵀ/√d + bias) V for q, k, v [..., N, d] and a bias that broadcasts to [..., N, N].

    Uses torch.nn.functional.scaled_dot_product_attention when PyTorch has it (2.0 and later),
    else the same computation written out."""
    bias = bias.to(q.dtype)
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + bias
    return torch.softmax(scores, dim=-1) @ v


def _pattern_of(prior):
    """bool [L, H, N, N] (or broadcastable) open cells of a CompiledMask, MaskPrior or
    MaskedTransformer; a bool tensor is taken as the pattern itself."""
    if isinstance(prior, torch.Tensor):
        return prior.bool()
    if isinstance(prior, (MaskPrior, MaskedTransformer)):
        return prior.open_pattern()
    return open_pattern(prior)


def prior_mass(attn, prior, layer=0):
    """Mean attention mass on the prior's open cells, averaged over queries, heads and any leading
    dimensions. attn holds attention weights (rows sum to 1): [..., H, N, N] of layer `layer`, or
    [..., L, H, N, N] of every layer when layer is None (a list of per-layer maps, as
    MaskedTransformer.attention_maps gives, is stacked so). prior is a CompiledMask, a MaskPrior
    or a MaskedTransformer (a spec shared by layers or heads broadcasts), or a bool pattern."""
    if isinstance(attn, (list, tuple)):
        attn, layer = torch.stack(list(attn), dim=-4), None
    pattern = _pattern_of(prior).to(attn.device)
    if layer is not None:
        pattern = pattern[0 if pattern.shape[0] == 1 else layer]
    return (attn * pattern.to(attn.dtype)).sum(-1).mean()


def _m_pair(prior):
    if isinstance(prior, MaskPrior):
        return prior.M, prior.M0, prior.hard, prior.layers
    if isinstance(prior, MaskedTransformer):
        if prior.mask is None:
            raise ValueError("the model has no mask prior M")
        return prior.mask, prior.mask_init, prior.hard, prior.depth
    raise TypeError("mask_drift: expected a MaskPrior or a MaskedTransformer, got %s"
                    % type(prior).__name__)


def mask_drift(prior):
    """‖log σ(M_t) − log σ(M_0)‖_F per layer of the model: a tensor [layers] (hard cells
    excluded), for a MaskPrior or a MaskedTransformer (as the runtime's `mask_drift` metric)."""
    m, m0, hard, layers = _m_pair(prior)
    with torch.no_grad():
        keep = torch.ones_like(m) if hard is None else (~hard).to(m.dtype).expand_as(m)
        diff = (F.logsigmoid(m) - F.logsigmoid(m0)) * keep
        return diff.pow(2).sum(dim=(1, 2, 3)).sqrt().expand(layers).clone()

