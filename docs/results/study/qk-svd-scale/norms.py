#!/usr/bin/env python3
"""Prints the Frobenius norm of each query weight and of the embeddings in the weights.safetensors
of the run folders given (numpy only). Used for docs/RESULTS.md, "qk-svd at init std 0.02".
  /usr/bin/python3 norms.py /tmp/qk/def1 /tmp/qk/def002 /tmp/qk/tl1 /tmp/qk/tl002"""
import json
import struct
import sys

import numpy as np

for run in sys.argv[1:]:
    with open(f"{run}/weights.safetensors", "rb") as f:
        data = f.read()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8 : 8 + size])
    norms = {}
    for key, meta in sorted(header.items()):
        if key == "__metadata__" or not ("wq" in key or "embedding" in key):
            continue
        if meta["dtype"] != "F32":
            sys.exit(f"{run}: {key} is {meta['dtype']}, not F32")
        start, end = meta["data_offsets"]
        tensor = np.frombuffer(data[8 + size + start : 8 + size + end], dtype=np.float32)
        norms[key] = round(float(np.linalg.norm(tensor)), 1)
    print(run, json.dumps(norms))
