#!/usr/bin/env python3
"""A mask prior in FlexAttention: score_mod adds the bias, mask_mod keeps the cells that are not
hard, block_sparsity is the BlockMask's data (per 128 x 128 block: empty, partial or full). With
PyTorch >= 2.5 it runs flex_attention and compares it to dense attention; with an older PyTorch
it checks score_mod and mask_mod on index grids instead.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/export_flex.py
"""
import torch

import maskprior
from maskprior import export

spec = "mask causal\ntokens x[300]\nhard causal\nopen diagonal\nopen x[0] -> x[5]\n"
compiled = maskprior.compile(spec)
blocks = export.block_sparsity(compiled)           # block size 128: 3 x 3 blocks
print("block kinds (0 empty, 1 partial, 2 full):", blocks["kind"].tolist())
print("partial kv blocks per query block:", blocks["kv_num_blocks"].flatten().tolist())
print("full kv blocks per query block:   ", blocks["full_kv_num_blocks"].flatten().tolist())
dense = export.dense_bias(compiled, layer=0)       # [1, N, N]
q, k, v = (torch.randn(1, 2, 300, 16) for _ in range(3))
try:
    from torch.nn.attention.flex_attention import flex_attention
except ImportError:
    n = torch.arange(300)
    grid = export.score_mod(compiled)(torch.zeros(300, 300), 0, torch.tensor(0), n[:, None], n)
    print("score_mod on the index grid equals the dense bias:", torch.equal(grid, dense[0]))
    print("(no FlexAttention in PyTorch %s)" % torch.__version__)
else:
    out = flex_attention(q, k, v, score_mod=export.score_mod(compiled),
                         block_mask=export.block_mask(compiled))
    want = torch.softmax(q @ k.transpose(-2, -1) / 4 + dense, -1) @ v
    print("flex_attention equals dense attention:", torch.allclose(out, want, atol=1e-4))
