#!/usr/bin/env python3
"""One spec's mask spread over a model's layers and heads, three ways (maskc train's
--mask-sharing): shared by all, one M per layer, one per layer and head.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/broadcast.py
"""
import os

import maskprior
from maskprior.torch import MaskPrior, mask_drift

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
compiled = maskprior.compile(os.path.join(ROOT, "specs", "gotu", "parity2.mask"),
                             params={"n": 6})
print(compiled.metadata["params"])                 # {'n': 6}: an int
for sharing in ("spec", "layer", "head"):
    prior = MaskPrior(compiled, layers=2, heads=4, sharing=sharing)
    print(prior)                                   # M's shape, learnable or fixed, bias shape
    print("  bias()", tuple(prior.bias().shape), " prior(1)", tuple(prior(1).shape),
          " prior(1, 3)", tuple(prior(1, 3).shape), " drift", mask_drift(prior).tolist())
