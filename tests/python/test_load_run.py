"""maskprior.load_run against `maskc train` (CTest `python_load_run`): a tiny run of every task
family, trained with --save-test-rows, rebuilt in Python; the Python model's test metrics equal the
run's summary.json (test_loss to float tolerance, and the accuracies that its predictions give).

Environment as test_maskprior.py: PYTHONPATH holds build/python, MASKC is build/bin/maskc.
"""
import gzip
import json
import os
import pathlib
import shutil
import struct
import subprocess
import tempfile
import unittest

import numpy as np

import maskprior

try:
    import torch
    import maskprior.torch  # noqa: F401  (MaskedTransformer)
except ImportError:
    torch = None

ROOT = pathlib.Path(os.environ.get("MASKPRIOR_SOURCE_DIR",
                                   pathlib.Path(__file__).resolve().parents[2]))
MASKC = os.environ.get("MASKC", str(ROOT / "build" / "bin" / "maskc"))
TINY = ["--dim", "16", "--depth", "2", "--heads", "2", "--head-dim", "8", "--mlp", "16",
        "--epochs", "1", "--threads", "1", "--device", "cpu", "-q", "--save-test-rows"]


def write_fashion_mnist(folder, train_rows=40, test_rows=30):
    """Toy images in Fashion-MNIST's files (gzipped IDX): class c a bright square at place c."""
    rng = np.random.default_rng(0)
    folder.mkdir()
    for prefix, rows in (("train", train_rows), ("t10k", test_rows)):
        labels = np.arange(rows, dtype=np.uint8) % 10
        pixels = rng.integers(0, 40, size=(rows, 28, 28), dtype=np.uint8)
        for r, label in enumerate(labels):
            top, left = 2 + (label // 5) * 12, 2 + (label % 5) * 4
            pixels[r, top:top + 8, left:left + 8] = 220
        for kind, dims, data in (("images-idx3", (rows, 28, 28), pixels),
                                 ("labels-idx1", (rows,), labels)):
            header = bytes([0, 0, 8, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims)
            with gzip.open(folder / ("%s-%s-ubyte.gz" % (prefix, kind)), "wb") as f:
                f.write(header + data.tobytes())


def write_corpus(folder):
    folder.mkdir()
    lines = ["the cat sat on the mat.\n", "a dog ran in the fog.\n", "%\n", "to be or not.\n"]
    for f in range(4):
        (folder / ("file%d" % f)).write_text("".join(lines[(f + i) % 4] for i in range(40)))


def runs(tmp):
    """The families' runs: name -> (maskc train arguments, settings the run exercises)."""
    rev = tmp / "rev.mask"
    rev.write_text("mask rev\ntokens a[3], eq, c[3]\ndigits a msb_first\nhard causal\n"
                   "open diagonal\n")
    (tmp / "train.txt").write_text("".join("%d %d %d = %d %d %d\n" % (a, b, c, c, b, a)
                                           for a, b, c in np.ndindex(3, 3, 3)))
    write_fashion_mnist(tmp / "fashion")
    write_corpus(tmp / "corpus")
    parity2 = ROOT / "specs" / "gotu" / "parity2.mask"
    return {
        "boolean": ["--task", "parity2", "--n", "6", "--spec", parity2, "--init", "mask",
                    "--mask-sharing", "head", "--norm", "post", "--batch-size", "16"],
        "truth_table": ["--truth-table", ROOT / "tests" / "data" / "csv" / "parity2_seen.csv",
                        "--spec", ROOT / "tests" / "data" / "pass" / "parity2.mask", "-D", "n=2",
                        "--init", "mask-fixed", "--activation", "relu"],
        "arithmetic": ["--task", "addition", "--train-fraction", "0.000002", "--test-size", "40",
                       "--spec", ROOT / "specs" / "arith" / "addition.mask", "--init", "mask",
                       "--mask-sharing", "layer", "--pos-embedding", "sinusoidal",
                       "--batch-size", "64"],
        "sequence": ["--data", tmp / "train.txt", "--spec", rev, "--predict", "c", "--init",
                     "mask", "--loss-rows", "all", "--pos-init-std", "0.02"],
        "rope": ["--task", "addition", "--train-fraction", "0.000002", "--test-size", "40",
                 "--pos-embedding", "rope", "--qk-norm", "layer", "--batch-size", "64"],
        "alibi": ["--data", tmp / "train.txt", "--spec", rev, "--predict", "c", "--init", "mask",
                  "--pos-embedding", "alibi"],
        "sizes": ["--task", "addition", "--digits", "1..2", "--test-digits", "3", "--train-size",
                  "50", "--test-size", "10", "--spec", ROOT / "specs" / "arith" / "addition.mask",
                  "--init", "mask", "--mask-param", "rules", "--pos-embedding", "none"],
        "vision": ["--task", "fashion-mnist", "--data-dir", tmp / "fashion", "--train-size", "40",
                   "--test-size", "30", "--batch-size", "20", "--pos-embedding", "none"],
        "language": ["--task", "fortunes-char", "--data-dir", tmp / "corpus", "--n", "12",
                     "--test-size", "16", "--spec", ROOT / "specs" / "language" / "distance.mask",
                     "--init", "mask", "--batch-size", "32"],
    }


@unittest.skipIf(torch is None, "needs PyTorch")
class LoadRunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        tmp = pathlib.Path(cls.tmp.name)
        cls.runs = {}
        for name, args in runs(tmp).items():
            out = tmp / ("run_" + name)
            # A run over several sizes keeps no test rows (they are of several lengths).
            tiny = [a for a in TINY if name != "sizes" or a != "--save-test-rows"]
            result = subprocess.run([MASKC, "train", *map(str, args), *tiny, "--out", str(out)],
                                    capture_output=True, text=True, check=False)
            cls.runs[name] = (out, result)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check_run(self, name):
        out, result = self.runs[name]
        self.assertEqual(result.returncode, 0, result.stderr)
        model = maskprior.load_run(out)
        summary = json.loads((out / "summary.json").read_text())
        self.assertEqual(model.run_summary, summary)
        metrics = maskprior.test_metrics(model, out)
        final = summary["final"] if "final" in summary else summary
        for key in ("test_loss", "seen_mse", "unseen_mse"):
            if key in metrics and metrics[key] is not None:
                self.assertAlmostEqual(metrics[key], final[key], delta=1e-5 * max(1, final[key]),
                                       msg="%s %s" % (name, key))
        return model, metrics, final

    def test_boolean(self):
        model, metrics, final = self.check_run("boolean")
        self.assertEqual(tuple(model.mask.shape), (2, 2, 7, 7))   # --mask-sharing head
        self.assertTrue(model.blocks[0].post_norm)

    def test_truth_table(self):
        model, _, _ = self.check_run("truth_table")
        self.assertFalse(isinstance(model.mask, torch.nn.Parameter))   # mask-fixed: a buffer

    def test_arithmetic(self):
        model, metrics, final = self.check_run("arithmetic")
        rows, info = maskprior.run.load_test_rows(model.run_path)
        first, length = info["answer_offset"], info["answer_length"]
        right = (metrics["predictions"] == rows["inputs"][:, first:first + length]).all(1)
        self.assertAlmostEqual(right.double().mean().item(), final["sequence_accuracy"])
        # generate() decodes greedily without reading the answer: the answers it gets right are
        # those the teacher-forced argmax gets right, so the same sequence accuracy.
        blanked = rows["inputs"].clone().long()
        blanked[:, first:] = 0
        generated = model.generate(blanked, first)
        decoded = (generated[:, first:first + length] == rows["inputs"][:, first:first + length])
        self.assertTrue(torch.equal(decoded.all(1), right))
        self.assertTrue(torch.equal(model.generate(blanked[0], first), generated[0]))
        with self.assertRaises(ValueError):
            model.generate(blanked[:, :-1], first)
        self.assertEqual(tuple(model.mask.shape[:2]), (2, 1))   # --mask-sharing layer
        # The sinusoids are a buffer in the file; Python's own table equals the runtime's.
        from maskprior.model import sinusoids
        fresh = maskprior.torch.MaskedTransformer(**model.settings)
        torch.testing.assert_close(fresh.position_embedding, model.position_embedding)
        torch.testing.assert_close(sinusoids(12, 16), model.position_embedding)

    def test_sequence_data(self):
        self.check_run("sequence")

    def test_rope_and_alibi(self):
        # The Python model's rotary and ALiBi positions (and QK normalisation) give the runtime's
        # test loss.
        for name in ("rope", "alibi"):
            model, _, _ = self.check_run(name)
            self.assertEqual(model.settings["pos_embedding"], name)
            self.assertFalse(model.position_embedding.any())
        # The rope run also norms its queries and keys (--qk-norm layer, before the rotation).
        model, _, _ = self.check_run("rope")
        self.assertEqual(model.settings["qk_norm"], "layer")
        self.assertIsNotNone(model.block0.q_norm)

    def test_a_run_over_several_sizes_is_refused_with_the_way_on(self):
        out, result = self.runs["sizes"]
        self.assertEqual(result.returncode, 0, result.stderr)
        with self.assertRaises(ValueError) as refused:
            maskprior.load_run(out)
        self.assertIn("a prior per size", str(refused.exception))
        self.assertIn("maskc distill", str(refused.exception))

    def test_vision(self):
        model, metrics, final = self.check_run("vision")
        rows, _ = maskprior.run.load_test_rows(model.run_path)
        top1 = (metrics["predictions"] == rows["targets"]).double().mean().item()
        self.assertAlmostEqual(top1, final["top1"])
        self.assertEqual(model.patch_features, 16)
        self.assertFalse(model.position_embedding.any())   # --pos-embedding none

    def test_language(self):
        model, metrics, final = self.check_run("language")
        rows, _ = maskprior.run.load_test_rows(model.run_path)
        accuracy = (metrics["predictions"] == rows["targets"]).double().mean().item()
        self.assertAlmostEqual(accuracy, final["test_accuracy"])


class HostileRunFilesTest(unittest.TestCase):
    """A run folder edited or replaced by hand: every mistake is an InputError naming the file,
    raised before a model is built (a FIFO is not waited on; depth 1e8 allocates nothing)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.run_dir = pathlib.Path(cls.tmp.name) / "run"
        subprocess.run([MASKC, "train", "--task", "parity2", "--n", "6", "--init", "mask", "--spec",
                        str(ROOT / "specs" / "gotu" / "parity2.mask"), *TINY, "--out",
                        str(cls.run_dir)], check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def refused(self, edit, *parts):
        folder = pathlib.Path(tempfile.mkdtemp(dir=self.tmp.name)) / "copy"
        shutil.copytree(self.run_dir, folder)
        edit(folder)
        with self.assertRaises(maskprior.InputError) as refused:
            maskprior.load_run(folder)
        for part in parts:
            self.assertIn(part, str(refused.exception))

    def test_folders_that_are_not_one_finished_run_name_the_next_step(self):
        # A run not finished yet (no weights), a folder of runs (a sweep's --out), a folder
        # holding no run, and a run without saved test rows: each error says what to do.
        self.refused(lambda f: (f / "weights.safetensors").unlink(), "has not finished",
                     "maskc train --resume")
        folder = pathlib.Path(tempfile.mkdtemp(dir=self.tmp.name))
        for seed in ("seed0", "seed1"):
            shutil.copytree(self.run_dir, folder / "init=mask" / seed)
        with self.assertRaises(maskprior.InputError) as refused:
            maskprior.load_run(folder)
        message = str(refused.exception)
        self.assertIn("a folder of runs", message)
        self.assertIn(os.path.join("init=mask", "seed0") + ", " +
                      os.path.join("init=mask", "seed1"), message)
        self.assertEqual(maskprior.load_run(folder / "init=mask" / "seed1").depth, 2)
        with self.assertRaises(maskprior.InputError) as refused:
            maskprior.load_run(pathlib.Path(tempfile.mkdtemp(dir=self.tmp.name)))
        self.assertIn("holds no run", str(refused.exception))
        without_rows = folder / "init=mask" / "seed0"
        (without_rows / "test_rows.safetensors").unlink()
        with self.assertRaises(maskprior.InputError) as refused:
            maskprior.run.load_test_rows(without_rows)
        self.assertIn("maskc train --save-test-rows", str(refused.exception))

    def test_config_against_the_weights(self):
        def setting(key, value):
            def edit(folder):
                config = json.loads((folder / "config.json").read_text())
                config[key] = value
                (folder / "config.json").write_text(json.dumps(config))
            return edit
        self.refused(setting("depth", 100000000), "depth is 100000000", "holds 2 blocks")
        self.refused(setting("heads", 1000000000), "block0.wq.weight as [8000000000, 16]",
                     "not of one model")
        self.refused(setting("mlp", 17), "block0.fc_in.weight as [17, 16]")
        self.refused(setting("depth", -1), "depth is -1; it must be a whole number")
        self.refused(setting("heads", "2"), 'heads is "2"')

    def test_files_that_are_not_json_or_not_files(self):
        def fifo(name):
            return lambda folder: ((folder / name).unlink(), os.mkfifo(folder / name))
        self.refused(fifo("config.json"), "config.json is not a regular file")
        self.refused(fifo("summary.json"), "summary.json is not a regular file")
        self.refused(lambda f: (f / "config.json").write_bytes(b'{"a": "\xff"}'), "not UTF-8")
        self.refused(lambda f: (f / "config.json").write_text("[" * 100000 + "]" * 100000),
                     "nested too deep")
        self.refused(lambda f: (f / "config.json").write_text("[1]"), "not a JSON object")
        self.refused(lambda f: (f / "config.json").write_text("{"), "not valid JSON")


if __name__ == "__main__":
    unittest.main()
