#!/usr/bin/env python3
"""A mask prior as the attn_mask of F.scaled_dot_product_attention and nn.MultiheadAttention,
and as a Hugging Face 4-D attention mask combined with padding.

Boolean masks mean opposite things: SDPA's True = may attend, nn.MultiheadAttention's True =
may NOT attend (export.bool_mask(prior, "sdpa" or "mha")). A float mask is added to the scores
in both.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/export_sdpa_hf.py
"""
import os

import torch

import maskprior
from maskprior import export
from maskprior.torch import MaskPrior, attend

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
compiled = maskprior.compile(os.path.join(ROOT, "specs", "arith", "addition.mask"))
prior = MaskPrior(compiled, layers=2, heads=4, sharing="head")   # 4 heads, each its own M
mask = export.sdpa_mask(prior, layer=1)                          # [1, 4, N, N]
q, k, v = (torch.randn(2, 4, 12, 8) for _ in range(3))
print("SDPA attn_mask", tuple(mask.shape), "->", tuple(attend(q, k, v, mask).shape))
mha = torch.nn.MultiheadAttention(32, 4, batch_first=True)
x = torch.randn(2, 12, 32)
out, _ = mha(x, x, x, attn_mask=export.mha_mask(prior, layer=1, batch=2))   # [2 * 4, N, N]
print("nn.MultiheadAttention attn_mask", tuple(export.mha_mask(prior, 1, batch=2).shape),
      "->", tuple(out.shape))
print("bool masks: sdpa True at (0, 1)?", bool(export.bool_mask(compiled, "sdpa")[0, 1]),
      " mha True at (0, 1)?", bool(export.bool_mask(compiled, "mha")[0, 1]))
padding = torch.tensor([[1] * 12, [1] * 9 + [0] * 3])             # 0 = padded token
hf = export.hf_mask(prior, padding, layer=1)                      # [B, H, N, N]
print("Hugging Face 4-D mask", tuple(hf.shape), "padded keys hold", hf[1, 0, 0, -1].item())
