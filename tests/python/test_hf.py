"""maskprior.export inside Hugging Face transformers models (CTest `python_hf`): hf_mask as the
4-D mask of a tiny, randomly initialised Llama and GPT-2 (no weights downloaded, no network),
and a learnable MaskPrior trained inside a tiny Llama through transformers' attention registry
(export.hf_register). Written against transformers 5.25 and PyTorch 2.15, on the CPU.
PYTHONPATH holds build/python; skipped, with the reason, without PyTorch or transformers."""
import contextlib
import unittest

import maskprior

try:
    import torch
    from maskprior import export
    from maskprior.torch import MaskPrior
except ImportError:  # everything here needs PyTorch
    torch = None
try:
    import transformers
    from transformers import AutoModelForCausalLM, GPT2Config, LlamaConfig
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb
    MISSING = None
except ImportError as error:
    transformers = None
    MISSING = "needs transformers (%s)" % error

# 4 heads over 8 tokens; head 1 also opens x[3] -> x[1]. Causal: a 4-D mask replaces the
# model's own causal mask.
HEADS = ("mask heads\ntokens x[8]\nheads 4\nhard causal\nopen diagonal\n"
         "head 1 { open x[3] -> x[1] }\n")
# Not causal: through the registry the model's causal mask must still apply.
OPEN = "mask open\ntokens x[8]\nopen diagonal\nopen x[6] -> x[7]\n"
N, VOCAB = 8, 50


def tiny_llama(attn_implementation, kv_heads=4):
    """A 2-layer Llama (hidden 32, 4 heads of 8, kv_heads key-value heads), random weights. The
    config is new for each model: from_config keeps the config object it is given, so a second
    model built from the same one would switch the first one's attention implementation."""
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=kv_heads,
                         max_position_embeddings=16)
    return AutoModelForCausalLM.from_config(config, attn_implementation=attn_implementation)


def tiny_gpt2(attn_implementation):
    config = GPT2Config(vocab_size=VOCAB, n_positions=16, n_embd=32, n_layer=2, n_head=4,
                        bos_token_id=0, eos_token_id=0)  # GPT-2's 50256 is outside VOCAB
    return AutoModelForCausalLM.from_config(config, attn_implementation=attn_implementation)


def by_hand(q, k, v, bias):
    """softmax(QKᵀ/√d + bias) V written out, for q [B, H, N, d] and k, v [B, H or fewer, N, d]
    (grouped-query heads repeated): [B, N, H · d]."""
    groups = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1)
    weights = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5 + bias, dim=-1)
    return (weights @ v).transpose(1, 2).reshape(q.shape[0], q.shape[2], -1)


def llama_by_hand(attn, call, bias):
    """A LlamaAttention's output from the hidden states and rotary embeddings of `call`."""
    hidden = call["hidden_states"]
    b, n, _ = hidden.shape

    def heads(t):
        return t.view(b, n, -1, attn.head_dim).transpose(1, 2)

    q, k = apply_rotary_pos_emb(heads(attn.q_proj(hidden)), heads(attn.k_proj(hidden)),
                                *call["position_embeddings"])
    return attn.o_proj(by_hand(q, k, heads(attn.v_proj(hidden)), bias))


def gpt2_by_hand(attn, call, bias):
    """A GPT2Attention's output (dropout off) from the hidden states of `call`."""
    hidden = call["hidden_states"]
    b, n, _ = hidden.shape
    q, k, v = (t.view(b, n, -1, attn.head_dim).transpose(1, 2)
               for t in attn.c_attn(hidden).split(attn.embed_dim, dim=2))
    return attn.c_proj(by_hand(q, k, v, bias))


@contextlib.contextmanager
def recorded(modules):
    """Records each call of the modules: {"module", "hidden_states", "position_embeddings",
    "output"} (the attention output before any residual)."""
    calls = []

    def hook(module, args, kwargs, output):
        hidden = kwargs.get("hidden_states", args[0] if args else None)
        calls.append({"module": module, "hidden_states": hidden, "output": output[0],
                      "position_embeddings": kwargs.get("position_embeddings")})

    hooks = [m.register_forward_hook(hook, with_kwargs=True) for m in modules]
    try:
        yield calls
    finally:
        for h in hooks:
            h.remove()


def padding_bias(prior_bias, padding):
    """[B, H, N, N]: a bias [H, N, N] with −inf on the padded keys (padding [B, N], 0 = pad)."""
    return prior_bias[None].masked_fill((padding == 0)[:, None, None, :], float("-inf"))


@unittest.skipIf(torch is None, "needs PyTorch")
@unittest.skipIf(transformers is None, MISSING)
class HuggingFaceMaskTest(unittest.TestCase):
    """hf_mask as the model's attention_mask. transformers 5.x (masking_utils.create_causal_mask)
    passes a 4-D mask through as it is, for every attention implementation, in place of the
    causal and padding masks it would build."""

    def setUp(self):
        torch.manual_seed(0)
        self.compiled = maskprior.compile(HEADS)
        self.ids = torch.randint(0, VOCAB, (2, N))
        self.padding = torch.ones(2, N, dtype=torch.long)
        self.padding[1, 6:] = 0

    def check_layers(self, model, attentions, by_hand_fn):
        """Every attention module's output under hf_mask equals the one computed by hand with
        the bias (and differs from the one without it)."""
        mask = export.hf_mask(self.compiled, self.padding)
        self.assertEqual(tuple(mask.shape), (2, 4, N, N))
        dense = export.dense_bias(self.compiled, 0)
        bias = padding_bias(dense, self.padding)
        hard_only = padding_bias(torch.zeros_like(dense).masked_fill(dense.isneginf(),
                                                                     float("-inf")), self.padding)
        with torch.no_grad(), recorded(attentions) as calls:
            model(self.ids, attention_mask=mask)
        self.assertEqual(len(calls), len(attentions))
        for call in calls:
            want = by_hand_fn(call["module"], call, bias)
            torch.testing.assert_close(call["output"], want, atol=1e-5, rtol=1e-5)
            self.assertFalse(torch.allclose(call["output"], by_hand_fn(call["module"], call,
                                                                       hard_only), atol=1e-3))

    def test_llama_eager_and_sdpa_take_the_4d_mask(self):
        # "eager" adds the mask to the scores itself, as by_hand does; "sdpa", transformers'
        # default, hands it to F.scaled_dot_product_attention as attn_mask (is_causal off, as a
        # mask is given). Both, since a model gets "sdpa" unless "eager" is asked for.
        for impl in ("eager", "sdpa"):
            model = tiny_llama(impl, kv_heads=2).eval()
            self.assertEqual(model.config._attn_implementation, impl)
            self.check_layers(model, [layer.self_attn for layer in model.model.layers],
                              llama_by_hand)

    def test_gpt2_sdpa_takes_the_4d_mask(self):
        model = tiny_gpt2("sdpa").eval()
        self.check_layers(model, [block.attn for block in model.transformer.h], gpt2_by_hand)

    def test_the_4d_mask_replaces_the_causal_mask(self):
        # A spec without `hard causal` lets a decoder see the future through hf_mask, unless
        # causal=True.
        model = tiny_llama("sdpa").eval()
        c = maskprior.compile(OPEN)
        changed = self.ids.clone()
        changed[:, -1] = (changed[:, -1] + 1) % VOCAB
        with torch.no_grad():
            for causal, sees_future in ((False, True), (True, False)):
                mask = export.hf_mask(c, causal=causal)
                before = model(self.ids, attention_mask=mask).logits[:, :-1]
                after = model(changed, attention_mask=mask).logits[:, :-1]
                self.assertEqual(not torch.allclose(before, after), sees_future, causal)


@unittest.skipIf(torch is None, "needs PyTorch")
@unittest.skipIf(transformers is None, MISSING)
class AttentionRegistryTest(unittest.TestCase):
    """export.hf_register: a prior as an attention implementation of transformers."""

    def setUp(self):
        torch.manual_seed(0)
        self.compiled = maskprior.compile(HEADS)

    def test_a_learnable_prior_trains_inside_llama(self):
        # open/close ±3 rather than the default ±10, which saturates σ: gradients of 1e-13
        # move M = 10 by less than a float32 step.
        compiled = maskprior.compile(HEADS, open=3.0, close=-3.0)
        prior = MaskPrior(compiled, learnable=True, layers=2, heads=4, sharing="head")
        model = tiny_llama(export.hf_register(prior, "maskprior_train"), kv_heads=2)
        self.assertEqual(model.config._attn_implementation, "maskprior_train")
        reference = tiny_llama("eager", kv_heads=2).eval()
        reference.load_state_dict(model.state_dict())
        data = torch.randint(0, VOCAB, (32, N))
        data[:, 1::2] = data[:, 0::2]  # toy next-token task: every odd token repeats the last
        padding = torch.ones(32, N, dtype=torch.long)
        padding[0, 6:] = 0
        with torch.no_grad():  # at M0 both layers hold the spec's M: eager with hf_mask agrees
            torch.testing.assert_close(model.eval()(data, attention_mask=padding).logits,
                                       reference(data, attention_mask=export.hf_mask(
                                           prior, padding)).logits, atol=1e-5, rtol=1e-5)
        model.train()
        optimizer = torch.optim.Adam([*model.parameters(), *prior.parameters()], lr=1e-2)
        losses, first_grad = [], None
        for _ in range(20):
            loss = model(data, labels=data).loss
            optimizer.zero_grad()
            loss.backward()
            first_grad = prior.M.grad.clone() if first_grad is None else first_grad
            optimizer.step()
            losses.append(loss.item())
        self.assertLess(losses[-1], 0.75 * losses[0], losses)
        # M's gradient: on every allowed cell of the rows that reach a loss (not row 0, one key
        # only, nor the last row, which predicts nothing), never on a hard cell.
        allowed = ~prior.hard
        self.assertTrue((first_grad[..., 1:-1, :] != 0).eq(allowed[1:-1]).all())
        change = (prior.M - prior.M0).detach()
        # Moved on (nearly) every such cell: a cell whose gradient stays tiny may move less than
        # float32 resolves at |M| = 5 (about 5e-7).
        moved = (change[..., 1:-1, :][..., allowed[1:-1]] != 0).float().mean().item()
        self.assertGreater(moved, 0.95)
        self.assertGreater(change.abs().max().item(), 0.05)
        for untouched in (change[..., prior.hard], change[..., 0, :], change[..., -1, :]):
            self.assertEqual(untouched.abs().max().item(), 0)
        self.assertFalse(torch.equal(prior.M[0], prior.M[1]))  # one M per layer and head
        self.check_each_layer_reads_its_own_bias(model.eval(), prior, data[:4])

    def check_each_layer_reads_its_own_bias(self, model, prior, ids):
        attentions = [layer.self_attn for layer in model.model.layers]
        with torch.no_grad(), recorded(attentions) as calls:
            full = model(ids).logits
        for layer, call in enumerate(calls):
            torch.testing.assert_close(call["output"],
                                       llama_by_hand(call["module"], call, prior(layer)),
                                       atol=1e-5, rtol=1e-5)
        with torch.no_grad():  # decoding with a cache reads the bias's last row
            start = model(ids[:, :-1], use_cache=True)
            step = model(ids[:, -1:], cache=start.cache, use_cache=True).logits
        torch.testing.assert_close(step[:, -1], full[:, -1], atol=1e-5, rtol=1e-5)

    def test_the_models_causal_and_padding_masks_still_apply(self):
        # hf_register also registers transformers' eager mask function under the name: without
        # it transformers builds no mask for an implementation it does not know.
        c = maskprior.compile(OPEN)
        model = tiny_llama(export.hf_register(c, "maskprior_open")).eval()
        reference = tiny_llama("eager").eval()
        reference.load_state_dict(model.state_dict())
        ids = torch.randint(0, VOCAB, (2, N))
        padding = torch.ones(2, N, dtype=torch.long)
        padding[1, 5:] = 0
        with torch.no_grad():
            got = model(ids, attention_mask=padding).logits
            want = reference(ids, attention_mask=export.hf_mask(c, padding, causal=True)).logits
            torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
            changed = ids.clone()
            changed[:, -1] = (changed[:, -1] + 1) % VOCAB
            torch.testing.assert_close(model(changed).logits[:, :-1], model(ids).logits[:, :-1])

    def test_names_and_shapes_that_do_not_fit(self):
        with self.assertRaises(ValueError):  # transformers would look for a kernel on the Hub
            export.hf_register(self.compiled, "me/maskprior")
        model = tiny_llama(export.hf_register(self.compiled, "maskprior_short")).eval()
        with self.assertRaises(ValueError):  # 9 tokens, the spec has 8
            model(torch.zeros(1, N + 1, dtype=torch.long))
        three = maskprior.compile(HEADS.replace("heads 4", "heads 3"))
        model = tiny_llama(export.hf_register(three, "maskprior_heads")).eval()
        with self.assertRaises(ValueError):  # 3 heads of bias, 4 in the model
            model(torch.zeros(1, N, dtype=torch.long))


if __name__ == "__main__":
    unittest.main()
