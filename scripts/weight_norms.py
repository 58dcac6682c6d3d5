#!/opt/maskprior/venv/bin/python
"""Prints the Frobenius norm of each query weight and of the embeddings in the weights.safetensors
of the run folders given, read with maskprior's own reader (the Python module of a build:
scripts/build.sh), one line per run: its label (LABEL::DIR, or the folder) and the norms. Used
for docs/RESULTS.md, "What decides the result", the qk-svd bullet
(docs/results/study/qk-svd-scale/norms.txt).
  /opt/maskprior/venv/bin/python scripts/weight_norms.py "pre-LN, pos init std 1::runs/qk/def1" ..."""
import json
import sys

import maskprior
import numpy as np

for arg in sys.argv[1:]:
    label, _, run = arg.partition("::") if "::" in arg else (arg, "", arg)
    tensors, _ = maskprior.read_safetensors(f"{run}/weights.safetensors")
    norms = {}
    for key, (dtype, array) in sorted(tensors.items()):
        if not ("wq" in key or "embedding" in key):
            continue
        if dtype != "F32":
            sys.exit(f"{run}: {key} is {dtype}, not F32")
        norms[key] = round(float(np.linalg.norm(array)), 1)
    print(f"{label}: {json.dumps(norms)}")
