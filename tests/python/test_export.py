"""maskprior.torch broadcasting and maskprior.export against the dense mask (CTest
`python_export`). PYTHONPATH holds build/python."""
import contextlib
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest
import warnings

import numpy as np

import maskprior

try:
    import torch
    import torch.nn.functional as F
    from maskprior import export
    from maskprior.torch import MaskPrior, MaskedTransformer, mask_drift, prior_mass
except ImportError:  # the torch tests are skipped without PyTorch
    torch = None

ROOT = pathlib.Path(os.environ.get("MASKPRIOR_SOURCE_DIR",
                                   pathlib.Path(__file__).resolve().parents[2]))
MASKC = os.environ.get("MASKC", str(ROOT / "build" / "bin" / "maskc"))
PARITY2 = ROOT / "specs" / "gotu" / "parity2.mask"
ADDITION = ROOT / "specs" / "arith" / "addition.mask"
# A causal spec over 300 tokens: 3 blocks of 128 (the last one 44), partial on the diagonal.
LONG = "mask long\ntokens x[300]\nhard causal\nopen diagonal\nopen x[0] -> x[5]\n"
HEADS = ("mask heads\ntokens x[6]\nheads 3\nhard causal\nopen diagonal\n"
         "head 1 { open x[3] -> x[1] }\n")
# 2 heads over 200 tokens (2 blocks of 128, the last one 72): per-head bias for FlexAttention.
HEADS200 = ("mask heads200\ntokens x[200]\nheads 2\nhard causal\nopen diagonal\n"
            "head 1 { open x[150] -> x[3] }\n")


def flex_attention_module():
    try:
        from torch.nn.attention import flex_attention
        return flex_attention
    except ImportError:
        return None


@contextlib.contextmanager
def eager_flex():
    """FlexAttention on the CPU without torch.compile, as the tests run it (PyTorch 2.15):
    flex_attention then traces score_mod and mask_mod with dynamo's "eager" backend and runs an
    unfused implementation that materialises the N × N scores; it works, and warns once that
    torch.compile(flex_attention) would fuse it. That compiled path works on the CPU too
    (inductor, with a C++ compiler) but costs about 20 s of compilation on this 2-core machine,
    too slow for a unit test; both give the same numbers. The warning is silenced here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="flex_attention called without torch.compile")
        yield


def dense_attention(q, k, v, bias):
    """softmax(QKᵀ/√d + bias) V written out, for q, k, v [B, H, N, d]."""
    return torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5 + bias, -1) @ v


def hard_only(bias):
    """The bias with the prior taken out: 0 where a cell may be attended to, −inf elsewhere."""
    return torch.zeros_like(bias).masked_fill(torch.isneginf(bias), float("-inf"))


@unittest.skipIf(torch is None, "needs PyTorch")
class BroadcastTest(unittest.TestCase):
    def test_one_spec_layer_and_head_spread_over_the_model(self):
        c = maskprior.compile(PARITY2, params={"n": 6})
        prior = MaskPrior(c, layers=2, heads=4)
        self.assertEqual(tuple(prior(1).shape), (4, 7, 7))   # was an IndexError
        self.assertEqual(tuple(prior(1, 3).shape), (7, 7))
        self.assertEqual(tuple(prior.bias().shape), (2, 4, 7, 7))
        self.assertEqual(tuple(prior.M.shape), (1, 1, 7, 7))
        torch.testing.assert_close(prior.bias()[1, 3], F.logsigmoid(torch.tensor(c.mask[0, 0])))
        with self.assertRaises(IndexError):
            prior(2)
        torch.testing.assert_close(MaskPrior(c)(5), prior(1)[:1])   # no model given: any layer

    def test_sharing_choices_mirror_mask_sharing(self):
        c = maskprior.compile(PARITY2, params={"n": 6})
        shapes = {s: tuple(MaskPrior(c, layers=2, heads=4, sharing=s).M.shape)
                  for s in ("spec", "layer", "head")}
        self.assertEqual(shapes, {"spec": (1, 1, 7, 7), "layer": (2, 1, 7, 7),
                                  "head": (2, 4, 7, 7)})
        prior = MaskPrior(c, layers=2, heads=4, sharing="head")
        with torch.no_grad():
            prior.M[1, 2] += 3
        self.assertEqual(mask_drift(prior).shape, (2,))
        self.assertEqual(mask_drift(prior)[0].item(), 0)
        self.assertGreater(mask_drift(prior)[1].item(), 0)
        with self.assertRaises(ValueError):
            MaskPrior(c, layers=2, heads=4, sharing="block")
        with self.assertRaises(ValueError):   # 3 heads of the spec do not fit 4
            MaskPrior(maskprior.compile(HEADS), heads=4)

    def test_repr_and_int_params(self):
        c = maskprior.compile(PARITY2, params={"n": 6})
        self.assertIsInstance(c.metadata["params"]["n"], int)
        text = repr(MaskPrior(c, layers=2, heads=4))
        self.assertIn("M=[1, 1, 7, 7] learnable", text)
        self.assertIn("bias=[2, 4, 7, 7]", text)
        self.assertIn("fixed", repr(MaskPrior(c, learnable=False)))

    def test_prior_mass_takes_priors_and_models(self):
        c = maskprior.compile(ADDITION)
        prior = MaskPrior(c, layers=2, heads=2)
        model = MaskedTransformer(vocab=12, seq_len=12, dim=8, depth=2, heads=2, head_dim=4,
                                  mlp=8, readout="causal_lm")
        model.set_mask(c, sharing="layer")
        maps = model.attention_maps(torch.randint(0, 12, (3, 12)))
        for p in (c, prior, model):
            self.assertAlmostEqual(prior_mass(maps, p).item(),
                                   prior_mass(torch.stack(maps, 1), p, None).item(), places=6)
            self.assertAlmostEqual(prior_mass(maps[1], p, 1).item(),
                                   prior_mass(maps[1], c).item(), places=6)
        self.assertEqual(mask_drift(model).tolist(), [0.0, 0.0])


@unittest.skipIf(torch is None, "needs PyTorch")
class ExportTest(unittest.TestCase):
    def priors(self):
        c = maskprior.compile(ADDITION, open=3.0, close=-2.0)
        heads = maskprior.compile(HEADS)
        return {"spec": c, "heads": heads, "prior": MaskPrior(heads, layers=2, heads=3),
                "long": maskprior.compile(LONG)}

    def test_score_mod_and_mask_mod_on_index_grids(self):
        for name, p in self.priors().items():
            dense = export.dense_bias(p, 0)
            n = dense.shape[-1]
            q, kv = torch.arange(n).view(-1, 1), torch.arange(n).view(1, -1)
            score_mod, mask_mod = export.score_mod(p), export.mask_mod(p)
            for h in range(dense.shape[0]):
                got = score_mod(torch.zeros(n, n), 0, torch.tensor(h), q, kv)
                self.assertTrue(torch.equal(got, dense[h]), name)
                self.assertTrue(torch.equal(mask_mod(0, h, q, kv), ~torch.isneginf(dense[h])))
            hard = getattr(p, "hard", None)
            if hard is not None and not isinstance(hard, torch.Tensor):
                np.testing.assert_array_equal(mask_mod(0, 0, q, kv).numpy(), ~np.array(hard))

    def dense_blocks(self, allowed, size):
        n = allowed.shape[0]
        blocks = -(-n // size)
        kind = np.zeros((blocks, blocks), int)
        for i in range(blocks):
            for j in range(blocks):
                cells = allowed[i * size:(i + 1) * size, j * size:(j + 1) * size]
                kind[i, j] = 2 if cells.all() else 1 if cells.any() else 0
        return kind

    def test_block_sparsity_equals_a_dense_computation(self):
        for name, p in self.priors().items():
            allowed = export.allowed(p).numpy()
            for size in (4, 128):
                data = export.block_sparsity(p, size)
                kind = self.dense_blocks(allowed, size)
                np.testing.assert_array_equal(data["kind"].numpy(), kind, err_msg=name)
                for prefix, which in (("", 1), ("full_", 2)):
                    num = data[prefix + "kv_num_blocks"][0, 0].numpy()
                    indices = data[prefix + "kv_indices"][0, 0].numpy()
                    for row in range(kind.shape[0]):
                        want = np.nonzero(kind[row] == which)[0]
                        self.assertEqual(num[row], len(want))
                        np.testing.assert_array_equal(indices[row, :len(want)], want)
        long = export.block_sparsity(self.priors()["long"])
        self.assertEqual(long["kind"].tolist(), [[1, 0, 0], [2, 1, 0], [2, 2, 1]])

    def test_sdpa_mask_keeps_a_learnable_priors_gradient(self):
        # Built inside forward from a learnable MaskPrior, sdpa_mask carries M's graph: SGD
        # through F.scaled_dot_product_attention moves M and lowers the loss. A CompiledMask's
        # mask is a constant, and score_mod's bias is taken detached.
        torch.manual_seed(0)
        p = self.priors()["prior"]
        self.assertTrue(export.sdpa_mask(p, layer=1).requires_grad)
        self.assertTrue(export.mha_mask(p, layer=1, batch=2).requires_grad)
        self.assertTrue(export.hf_mask(p, layer=1).requires_grad)
        self.assertFalse(export.sdpa_mask(self.priors()["spec"]).requires_grad)
        q, k, v = (torch.randn(2, 3, 6, 4) for _ in range(3))
        target = torch.randn(2, 3, 6, 4)
        before = p.M.detach().clone()
        optimizer = torch.optim.SGD(p.parameters(), lr=1.0)
        losses = []
        for _ in range(20):
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=export.sdpa_mask(p, layer=1))
            loss = (out - target).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        self.assertGreater((p.M.detach() - before).abs().max().item(), 1e-3)
        self.assertLess(losses[-1], losses[0])

    def test_sdpa_and_mha_masks(self):
        p = self.priors()["prior"]
        mask = export.sdpa_mask(p, layer=1)
        self.assertEqual(tuple(mask.shape), (1, 3, 6, 6))
        q, k, v = (torch.randn(2, 3, 6, 4) for _ in range(3))
        want = torch.softmax(q @ k.transpose(-2, -1) / 2 + p.bias(1), -1) @ v
        from maskprior.torch import attend
        torch.testing.assert_close(attend(q, k, v, mask), want)
        mha = torch.nn.MultiheadAttention(12, 3, batch_first=True)
        x = torch.randn(2, 6, 12)
        out, _ = mha(x, x, x, attn_mask=export.mha_mask(p, layer=1, batch=2))
        wq, wk, wv = mha.in_proj_weight.chunk(3)
        bq, bk, bv = mha.in_proj_bias.chunk(3)
        split = (lambda t: t.view(2, 6, 3, 4).transpose(1, 2))
        heads = torch.softmax(split(x @ wq.T + bq) @ split(x @ wk.T + bk).transpose(-2, -1) / 2
                              + p.bias(1), -1) @ split(x @ wv.T + bv)
        torch.testing.assert_close(out, mha.out_proj(heads.transpose(1, 2).reshape(2, 6, 12)))
        shared = self.priors()["spec"]
        self.assertEqual(tuple(export.mha_mask(shared).shape), (12, 12))
        hard = torch.from_numpy(np.array(shared.hard))
        self.assertTrue(torch.equal(export.bool_mask(shared, "mha"), hard))
        self.assertTrue(torch.equal(export.bool_mask(shared, "sdpa"), ~hard))
        one = torch.nn.MultiheadAttention(12, 1, batch_first=True)   # N = 12: addition's
        y = torch.randn(2, 12, 12)
        by_bool, _ = one(y, y, y, attn_mask=export.bool_mask(shared, "mha"))
        by_float, _ = one(y, y, y, attn_mask=torch.zeros(12, 12).masked_fill(hard, float("-inf")))
        torch.testing.assert_close(by_bool, by_float)

    def test_arguments_are_checked_as_maskc_export_checks_them(self):
        spec = self.priors()["spec"]
        for size in (0, -1, (1 << 20) + 1, 10 ** 12):
            with self.assertRaises(ValueError, msg=size):
                export.block_sparsity(spec, size)
        for size in (1.5, True, "128"):
            with self.assertRaises(TypeError, msg=repr(size)):
                export.block_sparsity(spec, size)
        self.assertEqual(tuple(export.block_sparsity(spec, 1 << 20)["kind"].shape), (1, 1))
        padding = torch.ones(2, 12, dtype=torch.long)
        with self.assertRaises(ValueError) as refused:
            export.hf_mask(spec, padding[:, None, :])   # [B, 1, N]: not a tokenizer's mask
        self.assertIn("must be [batch, 12]", str(refused.exception))
        with self.assertRaises(ValueError):
            export.hf_mask(spec, padding[:, :11])
        with self.assertRaises(TypeError) as refused:
            export.hf_mask(spec, padding, dtype=torch.int32)
        self.assertIn("floating torch dtype", str(refused.exception))
        for mask_dtype in (torch.int32, torch.float16, torch.bool):
            self.assertTrue(torch.equal(export.hf_mask(spec, padding.to(mask_dtype)),
                                        export.hf_mask(spec, padding)), mask_dtype)
        half = export.hf_mask(spec, padding, dtype=torch.float16)
        self.assertEqual((half.dtype, tuple(half.shape)), (torch.float16, (2, 1, 12, 12)))
        self.assertFalse(torch.isinf(half).any())

    def test_hugging_face_mask(self):
        shared = self.priors()["spec"]
        padding = torch.ones(2, 12, dtype=torch.long)
        padding[1, 9:] = 0
        mask = export.hf_mask(shared, padding)
        self.assertEqual(tuple(mask.shape), (2, 1, 12, 12))
        lowest = torch.finfo(torch.float32).min
        dense = export.dense_bias(shared, 0)[0].clamp(min=lowest)
        self.assertTrue(torch.equal(mask[0, 0], dense))
        self.assertTrue((mask[1, 0, :, 9:] == lowest).all())
        self.assertTrue(torch.equal(mask[1, 0, :, :9], dense[:, :9]))
        heads = export.hf_mask(self.priors()["heads"], padding[:, :6])
        self.assertEqual(tuple(heads.shape), (2, 3, 6, 6))
        with self.assertRaises(ValueError):
            export.hf_mask(self.priors()["heads"], per_head=False)
        spec = maskprior.compile("mask open\ntokens x[6]\nopen diagonal\nopen x[1] -> x[4]\n")
        plain = export.hf_mask(spec, padding[:, :6])
        causal = export.hf_mask(spec, padding[:, :6], causal=True)  # keys after the query
        future = torch.ones(6, 6, dtype=torch.bool).triu(1)
        self.assertTrue((plain[:, :, future] > lowest).any())
        self.assertTrue((causal[:, :, future] == lowest).all())
        self.assertTrue(torch.equal(causal[:, :, ~future], plain[:, :, ~future]))

    def test_numpy_arrays_equal_the_torch_bias(self):
        c = self.priors()["spec"]
        arrays = export.numpy_arrays(c)
        torch.testing.assert_close(torch.from_numpy(arrays["bias"]), MaskPrior(c).bias())
        np.testing.assert_array_equal(arrays["allowed"], ~np.array(c.hard))

    def test_maskc_export_writes_the_same_arrays(self):
        with tempfile.TemporaryDirectory() as tmp:
            spec = pathlib.Path(tmp) / "long.mask"
            spec.write_text(LONG)
            npy, blocks = pathlib.Path(tmp) / "bias.npy", pathlib.Path(tmp) / "blocks.safetensors"
            for to, out, extra in (("numpy", npy, []), ("flex-blocks", blocks, ["--block-size",
                                                                              "64"])):
                result = subprocess.run([MASKC, "export", str(spec), "--to", to, "-o", str(out),
                                         *extra], capture_output=True, text=True, check=False)
                self.assertEqual(result.returncode, 0, result.stderr)
            c = maskprior.compile(LONG)
            np.testing.assert_allclose(np.load(npy), export.numpy_arrays(c)["bias"], rtol=1e-6)
            tensors, metadata = maskprior.read_safetensors(blocks)
            self.assertEqual(metadata["block_size"], "64")
            for name, want in export.block_sparsity(c, 64).items():
                dtype, array = tensors[name]
                self.assertEqual(dtype, "I32")
                np.testing.assert_array_equal(array, want.numpy(), err_msg=name)

    def test_maskc_export_holds_no_more_than_max_bytes(self):
        # N = 5800: M and its provenance take 8 bytes a cell (269 MB); the bias is computed in
        # place of M, so the peak is the compiled mask's (it was 1.5 times that). Peak resident
        # memory of the child, as getrusage reports it in a fresh process.
        n = 5800
        measure = ("import resource, subprocess, sys\n"
                   "result = subprocess.run(sys.argv[1:], capture_output=True)\n"
                   "print(result.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
        with tempfile.TemporaryDirectory() as tmp:
            spec = pathlib.Path(tmp) / "big.mask"
            spec.write_text("mask big\ntokens x[%d]\nopen diagonal\n" % n)
            out = subprocess.run([sys.executable, "-c", measure, MASKC, "export", str(spec), "--to",
                                  "numpy", "-o", str(pathlib.Path(tmp) / "bias.npy")],
                                 capture_output=True, text=True, check=True).stdout.split()
            self.assertEqual(out[0], "0")
            compiled = 8 * n * n
            self.assertLess(int(out[1]) * 1024, 1.1 * compiled + (32 << 20))
            # Block data beyond --max-bytes is refused before it is allocated.
            result = subprocess.run([MASKC, "export", str(spec), "--to", "flex-blocks",
                                     "--block-size", "1", "--max-bytes", "300M", "-o",
                                     str(pathlib.Path(tmp) / "blocks.safetensors")],
                                    capture_output=True, text=True, check=False)
            self.assertEqual(result.returncode, 1, result.stderr)
            self.assertIn("5800 x 5800 blocks of N = 5800 tokens take 1.0 GiB, above --max-bytes",
                          result.stderr)
            self.assertFalse((pathlib.Path(tmp) / "blocks.safetensors").exists())

    def test_sdpa_equals_dense_attention_with_the_bias(self):
        priors = self.priors()
        per_head = priors["prior"]  # [2 layers, 3 heads]: M made to differ by head
        with torch.no_grad():
            per_head.M.add_(torch.randn_like(per_head.M))
        for name, p, heads in (("per-head", per_head, 3), ("shared", priors["spec"], 2)):
            mask = export.sdpa_mask(p, layer=1)
            bias = export.dense_bias(p, 1)
            self.assertEqual(tuple(mask.shape), (1, bias.shape[0]) + tuple(bias.shape[1:]))
            n = bias.shape[-1]
            q, k, v = (torch.randn(2, heads, n, 8) for _ in range(3))
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            torch.testing.assert_close(out, dense_attention(q, k, v, bias), msg=name)
            double = export.sdpa_mask(p, layer=1, dtype=torch.float64)
            out64 = F.scaled_dot_product_attention(q.double(), k.double(), v.double(),
                                                   attn_mask=double)
            torch.testing.assert_close(out64, dense_attention(q.double(), k.double(), v.double(),
                                                              bias.double()), msg=name)
            by_bool = F.scaled_dot_product_attention(q, k, v,
                                                     attn_mask=export.bool_mask(p, "sdpa"))
            torch.testing.assert_close(by_bool, dense_attention(q, k, v, hard_only(bias)))
            self.assertFalse(torch.allclose(by_bool, out, atol=1e-3), name)  # the prior counts

    def flex_priors(self):
        """Priors for FlexAttention: N = 300 and 200 (not multiples of 128), 6; shared and
        per-head bias (a MaskPrior whose M differs by head)."""
        prior = MaskPrior(maskprior.compile(HEADS200), layers=2, heads=2, sharing="head")
        with torch.no_grad():
            prior.M.add_(torch.randn_like(prior.M))
        return {"long": maskprior.compile(LONG), "heads200": maskprior.compile(HEADS200),
                "prior": prior, "heads": self.priors()["heads"]}

    @unittest.skipIf(torch is None or flex_attention_module() is None,
                     "needs PyTorch with FlexAttention (torch.nn.attention.flex_attention, "
                     "PyTorch >= 2.5); this one is %s" % getattr(torch, "__version__", None))
    def test_flex_attention_equals_dense_attention(self):
        flex = flex_attention_module()
        for name, p in self.flex_priors().items():
            bias = export.dense_bias(p, 1)
            n = bias.shape[-1]
            q, k, v = (torch.randn(2, 3 if name == "heads" else 2, n, 16) for _ in range(3))
            want = dense_attention(q, k, v, bias)
            with eager_flex():
                alone = flex.flex_attention(q, k, v, score_mod=export.score_mod(p, layer=1))
                blocked = flex.flex_attention(q, k, v, score_mod=export.score_mod(p, layer=1),
                                              block_mask=export.block_mask(p))
                created = flex.create_block_mask(export.mask_mod(p), None, None, n, n,
                                                 device="cpu")
                hard = flex.flex_attention(q, k, v, block_mask=created)
                both = flex.flex_attention(q, k, v, score_mod=export.score_mod(p, layer=1),
                                           block_mask=created)
            for what, out in (("score_mod", alone), ("score_mod + block_mask", blocked),
                              ("score_mod + create_block_mask", both)):
                torch.testing.assert_close(out, want, atol=1e-5, rtol=1e-5,
                                           msg="%s: %s" % (name, what))
            torch.testing.assert_close(hard, dense_attention(q, k, v, hard_only(bias)),
                                       atol=1e-5, rtol=1e-5, msg="%s: mask_mod" % name)

    @staticmethod
    def block_sets(mask, prefix):
        """Per query block, the set of kv blocks of a BlockMask that are partial ("") or full
        ("full_")."""
        num = getattr(mask, prefix + "kv_num_blocks")[0, 0].tolist()
        indices = getattr(mask, prefix + "kv_indices")[0, 0].tolist()
        return [set(row[:count]) for row, count in zip(indices, num)]

    @unittest.skipIf(torch is None or flex_attention_module() is None,
                     "needs PyTorch with FlexAttention (torch.nn.attention.flex_attention, "
                     "PyTorch >= 2.5); this one is %s" % getattr(torch, "__version__", None))
    def test_block_mask_agrees_with_create_block_mask(self):
        # create_block_mask pads N to a multiple of the block size and counts the padding as
        # masked: a block of the last (short) block row or column whose real cells are all
        # allowed is "partial" there, "full" in ours (which passes the true seq_lengths). Both
        # keep the same blocks, and full in theirs is full in ours.
        flex = flex_attention_module()
        for name, p in self.flex_priors().items():
            n = export.allowed(p).shape[-1]
            for size in (64, 128):
                ours = export.block_mask(p, block_size=size)
                with eager_flex():
                    theirs = flex.create_block_mask(export.mask_mod(p), None, None, n, n,
                                                    device="cpu", BLOCK_SIZE=size)
                self.assertEqual(tuple(ours.seq_lengths), (n, n))
                last = (n - 1) // size
                rows = zip(self.block_sets(ours, ""), self.block_sets(ours, "full_"),
                           self.block_sets(theirs, ""), self.block_sets(theirs, "full_"))
                for row, (partial, full, their_partial, their_full) in enumerate(rows):
                    where = "%s, block size %d, row %d" % (name, size, row)
                    self.assertEqual(partial | full, their_partial | their_full, where)
                    self.assertLessEqual(their_full, full, where)
                    for column in full - their_full:
                        self.assertIn(last, (row, column), where)

    def test_block_mask_without_flex_attention_names_the_version_it_needs(self):
        # As on a PyTorch without FlexAttention (1.13, 2.4): the import fails.
        name = "torch.nn.attention.flex_attention"
        saved = sys.modules.get(name)
        sys.modules[name] = None  # `import` of a None entry raises ImportError
        try:
            with self.assertRaises(ImportError) as caught:
                export.block_mask(maskprior.compile(PARITY2))
        finally:
            if saved is None:
                del sys.modules[name]
            else:
                sys.modules[name] = saved
        self.assertIn("PyTorch >= 2.5", str(caught.exception))
        self.assertIn(torch.__version__, str(caught.exception))


if __name__ == "__main__":
    unittest.main()
