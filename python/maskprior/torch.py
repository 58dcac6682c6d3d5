"""A compiled mask as a learnable attention prior in PyTorch (pure Python; needs only torch).

Attention with a mask prior is softmax(QKᵀ/√d + log σ(M)) V (Ma et al., 2026): `MaskPrior` holds
M (learnable, or a fixed buffer) and returns the additive bias log σ(M), with −inf on the
spec's hard cells; `attend` applies it. `prior_mass` and `mask_drift` measure how much of the
prior survives training.

    from maskprior.torch import MaskPrior, attend, prior_mass
    prior = MaskPrior(maskprior.compile("specs/gotu/parity2.mask", params={"n": 6}))
    out = attend(q, k, v, prior(layer=0))          # q, k, v: [B, H, N, d]
"""
import math

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ["MaskPrior", "attend", "prior_mass", "mask_drift", "open_pattern"]


def open_pattern(compiled):
    """bool [L, H, N, N]: cells that are not hard and lie nearer the open value than the close
    value (the pattern `maskc` trains against, core/cells.h `open_pattern`)."""
    if hasattr(compiled, "open_pattern"):
        return torch.from_numpy(np.asarray(compiled.open_pattern()))
    mask = torch.tensor(np.asarray(compiled.mask), dtype=torch.float64)
    meta = compiled.metadata
    pattern = (mask - meta["open"]).abs() < (mask - meta["close"]).abs()
    if compiled.hard is not None:
        pattern &= ~torch.from_numpy(np.asarray(compiled.hard, dtype=bool))
    return pattern


class MaskPrior(torch.nn.Module):
    """The logits M [L, H, N, N] of a CompiledMask as a parameter (or a buffer when not
    learnable); forward() gives the additive attention bias log σ(M) + (−inf on hard cells)."""

    def __init__(self, compiled, learnable=True):
        super().__init__()
        m = torch.tensor(np.asarray(compiled.mask), dtype=torch.float32)
        if learnable:
            self.M = torch.nn.Parameter(m)
        else:
            self.register_buffer("M", m)
        self.register_buffer("M0", m.clone())
        hard = compiled.hard
        hard = torch.zeros(m.shape[-2:], dtype=torch.bool) if hard is None else torch.tensor(
            np.asarray(hard, dtype=bool))
        self.register_buffer("hard", hard)

    def forward(self, layer=0, head=None):
        """log σ(M) of one layer: [H, N, N], or [N, N] for one head; −inf on hard cells."""
        m = self.M[layer] if head is None else self.M[layer, head]
        bias = F.logsigmoid(m)
        return bias.masked_fill(self.hard, float("-inf"))


def attend(q, k, v, bias):
    """softmax(QKᵀ/√d + bias) V for q, k, v [..., N, d] and a bias that broadcasts to [..., N, N].

    Uses torch.nn.functional.scaled_dot_product_attention when PyTorch has it (2.0 and later),
    else the same computation written out."""
    bias = bias.to(q.dtype)
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + bias
    return torch.softmax(scores, dim=-1) @ v


def prior_mass(attn, compiled, layer=0):
    """Mean attention mass on the spec's open cells, averaged over queries, heads and any leading
    dimensions. attn holds attention weights (rows sum to 1): [..., H, N, N] of layer `layer`, or
    [..., L, H, N, N] of every layer when layer is None."""
    pattern = open_pattern(compiled).to(attn.device)
    mask = pattern if layer is None else pattern[layer]
    return (attn * mask.to(attn.dtype)).sum(-1).mean()


def mask_drift(prior):
    """‖log σ(M_t) − log σ(M_0)‖_F per layer: a tensor [L] (hard cells excluded)."""
    with torch.no_grad():
        keep = (~prior.hard).to(prior.M.dtype)
        diff = (F.logsigmoid(prior.M) - F.logsigmoid(prior.M0)) * keep
        return diff.pow(2).sum(dim=(1, 2, 3)).sqrt()
