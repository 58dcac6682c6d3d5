#!/usr/bin/env python3
"""Prints the Frobenius norm of each query weight and of the embeddings in the weights.safetensors
of the run folders given, read with maskprior's own reader (the Python module of a build:
scripts/build.sh). Used for docs/RESULTS.md, "What decides the result", the qk-svd bullet.
  /usr/bin/python3 norms.py /tmp/qk/def1 /tmp/qk/def002 /tmp/qk/tl1 /tmp/qk/tl002"""
import json
import sys

import maskprior
import numpy as np

for run in sys.argv[1:]:
    tensors, _ = maskprior.read_safetensors(f"{run}/weights.safetensors")
    norms = {}
    for key, (dtype, array) in sorted(tensors.items()):
        if not ("wq" in key or "embedding" in key):
            continue
        if dtype != "F32":
            sys.exit(f"{run}: {key} is {dtype}, not F32")
        norms[key] = round(float(np.linalg.norm(array)), 1)
    print(run, json.dumps(norms))
