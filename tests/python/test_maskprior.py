"""Tests of the Python module maskprior (run by CTest as `python_module`).

Environment: PYTHONPATH holds build/python; MASKC is build/bin/maskc; MASKPRIOR_SOURCE_DIR is
the source tree (defaults to this file's ../..).
"""
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

import maskprior

ROOT = pathlib.Path(os.environ.get("MASKPRIOR_SOURCE_DIR",
                                   pathlib.Path(__file__).resolve().parents[2]))
MASKC = os.environ.get("MASKC", str(ROOT / "build" / "bin" / "maskc"))
PARITY2 = ROOT / "specs" / "gotu" / "parity2.mask"
ADDITION = ROOT / "specs" / "arith" / "addition.mask"

sys.path.insert(0, str(ROOT / "examples"))
import read_mask  # noqa: E402  the standard-library reader of examples/read_mask.py

try:
    import torch
except ImportError:  # the torch tests are skipped without PyTorch
    torch = None


def maskc(*args):
    return subprocess.run([MASKC, *map(str, args)], capture_output=True, text=True, check=False)


class CompileTest(unittest.TestCase):
    def test_the_namespace_lists_only_public_names(self):
        names = dir(maskprior)
        for public in maskprior.__all__:
            self.assertIn(public, names)
        for imported in ("collections", "json", "math", "numbers", "os", "tempfile"):
            self.assertNotIn(imported, names)

    def test_compile_from_path_str_and_pathlike(self):
        for spec in (str(PARITY2), PARITY2):
            c = maskprior.compile(spec)
            self.assertEqual(c.mask.shape, (1, 1, 16, 16))
            self.assertEqual(c.mask.dtype, np.float32)
            self.assertEqual(c.provenance.dtype, np.int32)
            self.assertIsNone(c.hard)
            self.assertEqual(c.metadata["name"], "parity2")
            self.assertEqual(c.metadata["params"], {"n": 15})

    def test_compile_from_text_matches_path(self):
        text = PARITY2.read_text()
        a, b = maskprior.compile(text), maskprior.compile(PARITY2)
        np.testing.assert_array_equal(a.mask, b.mask)
        self.assertEqual(a.metadata, b.metadata)

    def test_mask_is_a_view_that_keeps_the_compiled_mask_alive(self):
        c = maskprior.compile(PARITY2)
        mask = c.mask
        self.assertIsNotNone(mask.base)
        self.assertFalse(mask.flags.writeable)
        expected = np.array(mask)
        del c
        np.testing.assert_array_equal(mask, expected)

    def test_parameter_override(self):
        c = maskprior.compile(PARITY2, params={"n": 6})
        self.assertEqual(c.mask.shape, (1, 1, 7, 7))
        self.assertEqual(c.metadata["params"], {"n": 6})
        self.assertEqual([s["length"] for s in c.layout], [1, 6])

    def test_scale_override_and_layout(self):
        c = maskprior.compile(ADDITION, open=3.0, close=-2.0)
        self.assertEqual((c.metadata["open"], c.metadata["close"]), (3.0, -2.0))
        self.assertEqual(set(np.unique(c.mask)), {3.0, -2.0})
        self.assertEqual(c.hard.dtype, np.bool_)
        self.assertTrue(c.hard[0, 1] and not c.hard[1, 0])  # causal
        spans = {s["name"]: s for s in c.layout}
        self.assertEqual(spans["a"]["digits"], "msb_first")
        self.assertEqual(spans["c"]["digits"], "lsb_first")
        self.assertEqual((spans["c"]["offset"], spans["c"]["length"]), (8, 4))

    def test_arrays_equal_what_maskc_writes(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "a.safetensors")
            result = maskc("compile", ADDITION, "-o", path, "--open", "3", "--close", "-2")
            self.assertEqual(result.returncode, 0, result.stderr)
            c = maskprior.compile(ADDITION, open=3.0, close=-2.0)
            loaded = maskprior.load(path)
            np.testing.assert_array_equal(loaded.mask, c.mask)
            np.testing.assert_array_equal(loaded.provenance, c.provenance)
            np.testing.assert_array_equal(loaded.hard, c.hard)
            self.assertEqual(loaded.metadata, c.metadata)
            self.assertEqual(loaded.layout, c.layout)
            with open(path, "rb") as f:  # and as the standard-library reader sees it
                header, start = read_mask.read_header(f)
                n = c.n
                cells = read_mask.read_slice(f, start, header["mask"], 0, n * n)
            np.testing.assert_array_equal(np.array(cells, np.float32).reshape(1, 1, n, n), c.mask)

    def test_save_round_trips(self):
        c = maskprior.compile(PARITY2, params={"n": 4})
        with tempfile.TemporaryDirectory() as tmp:
            for fmt in ("safetensors", "npy"):
                path = os.path.join(tmp, "m." + fmt)
                c.save(path, format=fmt)
                np.testing.assert_array_equal(maskprior.load(path).mask, c.mask)
            np.testing.assert_array_equal(np.load(os.path.join(tmp, "m.npy")), c.mask)
            with self.assertRaises(maskprior.InputError):
                c.save(os.path.join(tmp, "m.x"), format="pickle")


class CopyTest(unittest.TestCase):
    def test_a_compiled_mask_pickles_and_copies(self):
        import copy
        import pickle
        c = maskprior.compile(ADDITION, open=3.0, close=-2.0)
        for twin in (pickle.loads(pickle.dumps(c)), copy.deepcopy(c), copy.copy(c)):
            self.assertIsInstance(twin, maskprior.CompiledMask)
            np.testing.assert_array_equal(twin.mask, c.mask)
            np.testing.assert_array_equal(twin.provenance, c.provenance)
            np.testing.assert_array_equal(twin.hard, c.hard)
            self.assertEqual((twin.name, twin.layout, twin.metadata, twin.labels),
                             (c.name, c.layout, c.metadata, c.labels))


class ErrorTest(unittest.TestCase):
    def test_spec_error_has_location(self):
        with self.assertRaises(maskprior.SpecError) as caught:
            maskprior.compile("mask bad\ntokens a[3]\nopen foo -> a\n")
        e = caught.exception
        self.assertIsInstance(e, ValueError)
        self.assertEqual((e.file, e.line, e.column), ("<string>", 3, 6))
        self.assertIn("unknown span 'foo'", e.message)
        self.assertTrue(str(e).startswith("<string>:3:6: error: unknown span 'foo'"))

    def test_spec_error_in_a_file_and_in_a_param(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bad.mask")
            with open(path, "w") as f:
                f.write("mask bad\ntokens a[3]\ndefault sideways\n")
            with self.assertRaises(maskprior.SpecError) as caught:
                maskprior.compile(path)
            self.assertEqual((caught.exception.file, caught.exception.line), (path, 3))
        with self.assertRaises(maskprior.SpecError) as caught:  # over the size cap: at `tokens`
            maskprior.compile(PARITY2, params={"n": 2000}, max_bytes=1000)
        self.assertEqual(caught.exception.line, 8)

    def test_input_errors(self):
        with self.assertRaises(maskprior.InputError) as caught:
            maskprior.load("/nonexistent/m.safetensors")
        self.assertIsInstance(caught.exception, ValueError)
        with self.assertRaises(maskprior.InputError):  # as maskc -D nope=3
            maskprior.compile(PARITY2, params={"nope": 3})
        with self.assertRaises(TypeError):
            maskprior.compile(PARITY2, params={"n": True})
        with self.assertRaises(maskprior.InputError) as caught:  # a mistyped path, not text
            maskprior.compile("specs/no_such_spec.mask")
        self.assertIn("no_such_spec.mask", str(caught.exception))


class ErrorDetailTest(unittest.TestCase):
    """The Python face of the errors: the same checks as maskc, attributes where the error is,
    messages that name Python's arguments (never maskc's flags), text that is always str."""

    def test_open_and_close_are_refused_as_by_maskc(self):
        for kwargs in ({"open": float("nan")}, {"close": -1e308}, {"open": float("inf")},
                       {"close": 1e39}):
            with self.subTest(**kwargs):
                with self.assertRaises(maskprior.InputError) as caught:
                    maskprior.compile(PARITY2, **kwargs)
                self.assertIn("is not a finite float32 number", str(caught.exception))
                flag, value = next(iter(kwargs.items()))
                self.assertEqual(maskc("compile", PARITY2, "--" + flag + "=" + repr(value),
                                       "-o", os.devnull).returncode, 2)
        c = maskprior.compile(PARITY2, open=3e38, close=-3e38)  # the float32 range itself
        self.assertEqual((c.metadata["open"], c.metadata["close"]), (3e38, -3e38))

    def test_params_are_ints_or_floats(self):
        for value in ("x", "6", None, True, [6], 1j):
            with self.subTest(value=value):
                with self.assertRaises(TypeError) as caught:
                    maskprior.compile(PARITY2, params={"n": value})
                self.assertIn("params['n']: expected an int or a float", str(caught.exception))
        with self.assertRaises(TypeError):
            maskprior.compile(PARITY2, params=[("n", 6)])
        with self.assertRaises(TypeError):
            maskprior.compile(PARITY2, params={6: 6})
        with self.assertRaises(maskprior.InputError) as caught:
            maskprior.compile(PARITY2, params={"n": float("nan")})
        self.assertEqual(str(caught.exception), "params['n'] is nan; a parameter must be a finite "
                                                "number")
        self.assertIsNone(caught.exception.file)
        self.assertEqual(maskprior.compile(PARITY2, params={"n": np.int64(6)}).n, 7)

    def test_messages_name_no_maskc_flags(self):
        with self.assertRaises(maskprior.InputError) as caught:
            maskprior.compile(PARITY2, params={"nope": 3})
        self.assertIn("params['nope'] = '3': ", str(caught.exception))
        self.assertIn("has no parameter nope (its parameters: n)", str(caught.exception))
        with self.assertRaises(maskprior.SpecError) as caught:  # a real where a length goes
            maskprior.compile(PARITY2, params={"n": 10 ** 30})
        self.assertEqual((caught.exception.file, caught.exception.line), (str(PARITY2), 8))
        errors = [caught.exception]
        sums = ROOT / "examples" / "your-data" / "running_sum.mask"
        for call in (lambda: maskprior.validate(PARITY2, task="parity2", depth=0),
                     lambda: maskprior.validate(PARITY2, task="parity2", readout="nope"),
                     lambda: maskprior.validate(PARITY2),
                     lambda: maskprior.validate(PARITY2, task="parity2", feedback="state"),
                     lambda: maskprior.validate(sums, depends="a[0]: a[0]"),
                     lambda: maskprior.compile(PARITY2, params={"nope": 3})):
            with self.assertRaises(maskprior.InputError) as caught:
                call()
            errors.append(caught.exception)
        for error in errors:
            self.assertNotIn("--", str(error))
            self.assertNotIn("-D", str(error))

    def test_a_spec_with_bytes_that_are_not_utf8_is_a_spec_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bytes.mask")
            with open(path, "wb") as f:
                f.write(b"mask bytes\ntokens a[3]\nopen \xff\xfe -> a  # caf\xe9\n")
            with self.assertRaises(maskprior.SpecError) as caught:
                maskprior.compile(path)
            e = caught.exception
            self.assertEqual((e.file, e.line, e.column), (path, 3, 6))
            self.assertIn("\\xff\\xfe", str(e))           # shown escaped, a str all the same
            self.assertIn("\\xff\\xfe", e.source_line)
            self.assertTrue(str(e).startswith(path + ":3:6: error: "))

    def test_input_error_has_file_and_line(self):
        with self.assertRaises(maskprior.InputError) as caught:
            maskprior.load("/nonexistent/m.safetensors")
        self.assertEqual((caught.exception.file, caught.exception.line),
                         ("/nonexistent/m.safetensors", None))
        self.assertIn("cannot read", caught.exception.message)
        with self.assertRaises(maskprior.InputError) as caught:
            maskprior.compile(PARITY2, params={"nope": 3})
        self.assertEqual((caught.exception.file, caught.exception.line), (str(PARITY2), None))
        with self.assertRaises(maskprior.InputError) as caught:
            maskprior.compile(PARITY2, max_bytes=1 << 40)
        self.assertEqual((caught.exception.file, caught.exception.line), (None, None))

    def test_truth_table_errors_have_file_line_and_column(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "t.csv")
            with open(path, "wb") as f:
                f.write(b"x0;x1;y\n1;1;1\n")
            with self.assertRaises(maskprior.SpecError) as caught:
                maskprior.validate(PARITY2, truth_table=path, params={"n": 2})
            e = caught.exception
            self.assertEqual((e.file, e.line, e.column), (path, 1, 3))
            self.assertIn("the file looks `;`-separated", e.message)
            with open(path, "wb") as f:
                f.write(b"x0,x1,y\n1,1,1\x00\n")
            with self.assertRaises(maskprior.SpecError) as caught:
                maskprior.validate(PARITY2, truth_table=path, params={"n": 2})
            self.assertEqual((caught.exception.line, caught.exception.column), (2, 6))
            self.assertIn("\\x00", str(caught.exception))


class LimitsTest(unittest.TestCase):
    # A spec whose rules write ~10^11 cells: minutes of work, cut short only by its work limit.
    SLOW = ("mask slow\ntokens x[1000]\nscale open = 1, close = -1\ndefault close\n"
            "for i in 0..1000000 { open x -> x }\n")

    def test_max_bytes_has_the_ceiling_of_the_cli(self):
        for call in (lambda: maskprior.compile(PARITY2, max_bytes=(64 << 30) + 1),
                     lambda: maskprior.compile(self.SLOW, max_bytes=1 << 62),
                     lambda: maskprior.load(PARITY2, max_bytes=1 << 40)):
            with self.assertRaises(maskprior.InputError) as caught:
                call()
            self.assertIn("max_bytes is", str(caught.exception))
            self.assertIn("at most 64 GiB (68719476736 bytes)", str(caught.exception))
        self.assertEqual(maskprior.compile(PARITY2, max_bytes=64 << 30).n, 16)  # the ceiling itself

    def test_max_bytes_must_be_a_number_of_bytes(self):
        with self.assertRaises(maskprior.InputError) as caught:
            maskprior.compile(PARITY2, max_bytes=-1)
        self.assertIn("max_bytes is -1; it must be a number of bytes", str(caught.exception))
        for bad in (1.5, "4096", True):
            with self.assertRaises(TypeError) as caught:
                maskprior.compile(PARITY2, max_bytes=bad)
            self.assertIn("max_bytes: expected an int", str(caught.exception))
        with self.assertRaises(maskprior.InputError):
            maskprior.load(PARITY2, max_bytes=-5)

    def test_ctrl_c_stops_a_long_compile(self):
        script = ("import sys, maskprior\n"
                  "print('compiling', flush=True)\n"
                  "try:\n"
                  "    maskprior.compile(sys.argv[1], max_bytes=64 << 30)\n"
                  "except KeyboardInterrupt:\n"
                  "    print('KeyboardInterrupt', flush=True)\n"
                  "    sys.exit(3)\n")
        child = subprocess.Popen([sys.executable, "-c", script, self.SLOW],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            self.assertEqual(child.stdout.readline(), "compiling\n")
            time.sleep(1)  # inside the compile
            child.send_signal(signal.SIGINT)
            # Uninterrupted, the compile runs for minutes: a minute means it did not stop.
            out, err = child.communicate(timeout=60)
        finally:
            child.kill()
            child.wait()
        self.assertEqual(child.returncode, 3, err)
        self.assertEqual(out, "KeyboardInterrupt\n")


class ValidateTest(unittest.TestCase):
    def check_same_as_maskc(self, spec, task, *flags, **kwargs):
        result = maskc("validate", spec, "--task", task, "--json", *flags)
        self.assertIn(result.returncode, (0, 1), result.stderr)
        expected = json.loads(result.stdout)
        self.assertEqual(maskprior.validate(spec, task=task, **kwargs), expected)
        return expected

    def test_validate_equals_maskc_json(self):
        report = self.check_same_as_maskc(PARITY2, "parity2")
        self.assertTrue(report["ok"])
        self.check_same_as_maskc(ADDITION, "addition")
        self.check_same_as_maskc(PARITY2, "parity2", "-D", "n=5", "--depth", "2",
                                 params={"n": 5}, depth=2)

    def test_validate_from_text_and_needs_one_target(self):
        report = maskprior.validate(PARITY2.read_text(), task="parity2")
        self.assertEqual(report["spec"], "parity2")
        with self.assertRaises(maskprior.InputError):
            maskprior.validate(PARITY2)
        with self.assertRaises(maskprior.InputError):
            maskprior.validate(PARITY2, task="no_such_task")

    def test_decoder_feedback_and_depends_equal_maskc_json(self):
        # The running sum declared, not tabulated: judged under each feedback rule.
        sums = ROOT / "examples" / "your-data" / "running_sum.mask"
        for feedback, code in (("token", 1), ("state", 0)):
            result = maskc("validate", sums, "--depends", "c[i]: a[..i+1]", "--feedback", feedback,
                           "--json")
            self.assertEqual(result.returncode, code, result.stderr)
            report = maskprior.validate(sums, depends="c[i]: a[..i+1]", feedback=feedback)
            self.assertEqual(report, json.loads(result.stdout))
            self.assertEqual(report["feedback"]["rule"], feedback)
            self.assertTrue(report["declared"])
            self.assertIsNone(report["support"])
        self.assertTrue(report["ok"])
        # A span as the readout: the rows before c are addition's default readout.
        self.assertEqual(maskprior.validate(ADDITION, task="addition", readout="before c"),
                         maskprior.validate(ADDITION, task="addition"))
        with self.assertRaises(maskprior.SpecError) as error:
            maskprior.validate(sums, depends=["c[i]: a[i]", "eq: z"])
        self.assertEqual((error.exception.file, error.exception.line, error.exception.column),
                         ("depends", 2, 5))
        with self.assertRaises(maskprior.InputError):
            maskprior.validate(sums, depends="c[i]: a[i]", feedback="carry")


@unittest.skipIf(torch is None, "needs PyTorch")
class TorchTest(unittest.TestCase):
    def setUp(self):
        from maskprior import torch as mt
        self.mt = mt
        self.compiled = maskprior.compile(ADDITION)

    def test_layers_and_heads_are_checked(self):
        for bad in (-1, 0):
            with self.assertRaises(ValueError):
                self.mt.MaskPrior(self.compiled, layers=bad)
            with self.assertRaises(ValueError):
                self.mt.MaskPrior(self.compiled, heads=bad)
        for bad in (2.5, True, "2"):
            with self.assertRaises(TypeError):
                self.mt.MaskPrior(self.compiled, layers=bad)
        self.assertEqual(self.mt.MaskPrior(self.compiled, layers=3).layers, 3)

    def test_bias_is_log_sigmoid_with_hard_cells(self):
        prior = self.mt.MaskPrior(self.compiled)
        bias = prior(0)
        self.assertEqual(tuple(bias.shape), (1, 12, 12))
        self.assertEqual(tuple(prior(0, 0).shape), (12, 12))
        hard = torch.from_numpy(np.array(self.compiled.hard))
        self.assertTrue(torch.isneginf(bias[0][hard]).all())
        m = torch.from_numpy(np.array(self.compiled.mask))[0, 0]
        torch.testing.assert_close(bias[0][~hard], torch.nn.functional.logsigmoid(m)[~hard])

    def test_gradients_flow_to_m_and_hard_cells_get_no_attention(self):
        prior = self.mt.MaskPrior(self.compiled)
        q, k, v = (torch.randn(2, 1, 12, 8) for _ in range(3))
        out = self.mt.attend(q, k, v, prior(0))
        out.sum().backward()
        self.assertIsNotNone(prior.M.grad)
        self.assertGreater(prior.M.grad.abs().sum().item(), 0)
        hard = torch.from_numpy(np.array(self.compiled.hard))
        self.assertTrue((prior.M.grad[0, 0][hard] == 0).all())
        attn = torch.softmax(q @ k.transpose(-2, -1) / 8 ** 0.5 + prior(0), -1)
        self.assertTrue((attn[..., hard] == 0).all())
        torch.testing.assert_close(out, attn @ v)
        mass = self.mt.prior_mass(attn, self.compiled)
        self.assertTrue(0 < mass.item() <= 1)
        torch.testing.assert_close(self.mt.prior_mass(attn.unsqueeze(1), self.compiled, None),
                                   mass)

    def test_fixed_prior_and_drift(self):
        fixed = self.mt.MaskPrior(self.compiled, learnable=False)
        self.assertEqual(list(fixed.parameters()), [])
        prior = self.mt.MaskPrior(self.compiled)
        self.assertEqual(self.mt.mask_drift(prior).tolist(), [0.0])
        with torch.no_grad():
            prior.M.add_(1.0)
        self.assertGreater(self.mt.mask_drift(prior)[0].item(), 0)

    def test_open_pattern_matches_python_rule(self):
        pattern = self.mt.open_pattern(self.compiled)
        mask = np.array(self.compiled.mask)
        expected = (np.abs(mask - 5) < np.abs(mask + 5)) & ~np.array(self.compiled.hard)
        np.testing.assert_array_equal(pattern.numpy(), expected)

    def test_the_prior_module_uses_cores_rule(self):
        core = torch.from_numpy(np.asarray(self.compiled.open_pattern()))
        pattern = self.mt.MaskPrior(self.compiled).open_pattern()
        self.assertTrue(torch.equal(pattern, core.expand_as(pattern)))
        self.assertTrue(pattern.any() and not pattern.all())


@unittest.skipIf(torch is None, "needs PyTorch")
class ExampleTest(unittest.TestCase):
    def run_example(self, name):
        return subprocess.run([sys.executable, str(ROOT / "examples" / "python" / name)],
                              capture_output=True, text=True, timeout=60, check=False)

    def test_train_toy(self):
        result = self.run_example("train_toy.py")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("prior mass before", result.stdout)
        self.assertIn("prior mass after", result.stdout)

    def test_compile_addition(self):
        result = self.run_example("compile_addition.py")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("c[3] . . . . . . . . . . . #", result.stdout)

    def test_load_run(self):
        result = self.run_example("load_run.py")
        self.assertEqual(result.returncode, 0, result.stderr)
        maskc_line, python_line = (line.split(":", 1)[1].split() for line in
                                   result.stdout.splitlines() if line.startswith(("maskc", "python")))
        for a, b in zip(maskc_line[1::2], python_line[1::2]):
            self.assertAlmostEqual(float(a), float(b), places=5)

    def test_broadcast(self):
        result = self.run_example("broadcast.py")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("{'n': 6}", result.stdout)
        self.assertIn("M=[2, 4, 7, 7] learnable, sharing=head", result.stdout)

    def test_export_flex(self):
        result = self.run_example("export_flex.py")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("[[1, 0, 0], [2, 1, 0], [2, 2, 1]]", result.stdout)
        self.assertRegex(result.stdout, "equals (the )?dense (bias|attention): True")

    def test_export_sdpa_hf(self):
        result = self.run_example("export_sdpa_hf.py")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("Hugging Face 4-D mask (2, 4, 12, 12)", result.stdout)
        self.assertIn("sdpa True at (0, 1)? False  mha True at (0, 1)? True", result.stdout)

    def test_export_jax(self):
        result = self.run_example("export_jax.py")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("bias (1, 12, 12) float32", result.stdout)


if __name__ == "__main__":
    unittest.main()
