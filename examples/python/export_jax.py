#!/usr/bin/env python3
"""A mask prior as NumPy arrays, for JAX (or anything else): the bias log sigmoid(M) with -inf
on hard cells, and the allowed cells. With JAX installed it runs jax.nn.dot_product_attention
with the bias; otherwise the same attention in NumPy.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/export_jax.py
"""
import os

import numpy as np

import maskprior
from maskprior import export

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
compiled = maskprior.compile(os.path.join(ROOT, "specs", "arith", "addition.mask"))
arrays = export.numpy_arrays(compiled)
bias = arrays["bias"][0]                          # layer 0: [H, N, N]
print("bias", bias.shape, bias.dtype, " allowed", arrays["allowed"].shape)
rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal((2, 12, 1, 8)).astype(np.float32) for _ in range(3))  # [B, N, H, d]
try:
    import jax
except ImportError:
    scores = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(8) + bias
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    out = np.einsum("bhqk,bkhd->bqhd", weights, v)
    print("NumPy attention", out.shape, "(no JAX here)")
else:
    out = jax.nn.dot_product_attention(q, k, v, bias=bias[None])
    print("jax.nn.dot_product_attention", out.shape)
