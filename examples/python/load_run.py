#!/usr/bin/env python3
"""Rebuild a `maskc train` run's model in PyTorch and recompute its test loss.

With a run folder as argument, loads that run; without, trains a tiny parity2 run with
build/bin/maskc (MASKC overrides the path) into a temporary folder first. `--save-test-rows`
makes maskc keep the test rows (test_rows.safetensors) that maskprior.test_metrics reads.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/load_run.py [RUN_DIR]
"""
import json
import os
import subprocess
import sys
import tempfile

import maskprior

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MASKC = os.environ.get("MASKC", os.path.join(ROOT, "build", "bin", "maskc"))


def tiny_run(folder):
    subprocess.run([MASKC, "train", "--task", "parity2", "--n", "6", "--spec",
                    os.path.join(ROOT, "specs", "gotu", "parity2.mask"), "--init", "mask",
                    "--dim", "16", "--depth", "2", "--heads", "2", "--head-dim", "8", "--mlp", "16",
                    "--epochs", "2", "--threads", "1", "--device", "cpu", "-q",
                    "--save-test-rows", "--out", folder], check=True)
    return folder


def main(run):
    model = maskprior.load_run(run)       # a maskprior.torch.MaskedTransformer, eval mode
    print(model.settings)
    print("M:", tuple(model.mask.shape), "learnable" if model.mask.requires_grad else "fixed")
    metrics = maskprior.test_metrics(model, run)
    summary = model.run_summary
    print("maskc:   seen_mse %.6f unseen_mse %.6f" % (summary["seen_mse"], summary["unseen_mse"]))
    print("python:  seen_mse %.6f unseen_mse %.6f" % (metrics["seen_mse"], metrics["unseen_mse"]))
    print("config:", json.dumps({k: model.run_config[k] for k in ("task", "init", "norm")}))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(tiny_run(os.path.join(tmp, "run")))
