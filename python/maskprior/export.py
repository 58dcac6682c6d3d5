"""A compiled mask for the attention APIs researchers use (docs/python.md, "Exports"):

- FlexAttention (torch.nn.attention.flex_attention, PyTorch ≥ 2.5): `score_mod` adds the
  prior's bias, score + bias[h, q, kv]; `mask_mod` keeps the cells that are not hard;
  `block_sparsity` is the data of a BlockMask (per 128 × 128 block: empty, full or partial, with
  the kv block counts and indices), computed from the compiled mask; `block_mask` builds one.
- SDPA (F.scaled_dot_product_attention) and nn.MultiheadAttention: `sdpa_mask`, `mha_mask`, the
  float attn_mask in each one's shape (a learnable prior's keeps its gradient: built inside
  forward, M trains), and `bool_mask` for the two boolean conventions (SDPA: True = may attend;
  nn.MultiheadAttention: True = may NOT attend).
- Hugging Face (transformers 5.x): `hf_mask`, a 4-D additive mask [B, 1 or H, N, N] combined
  with a padding mask (transformers uses a 4-D mask as it is, in place of its causal mask);
  `hf_attention` and `hf_register`, an attention function for transformers' AttentionInterface
  that adds a prior's bias to the scores, gradients kept (a learnable MaskPrior trains).
- JAX / NumPy: `numpy_arrays`, the bias and the hard pattern as NumPy arrays.

`prior` is everywhere a CompiledMask (maskprior.compile), a maskprior.torch.MaskPrior (its M now,
spread over its model's layers and heads) or a maskprior.torch.MaskedTransformer. The bias of a
cell is log σ(M) and −inf on hard cells (and on causal cells of a causal MaskedTransformer).
Everything but numpy_arrays needs PyTorch; hf_register also transformers (tested with 5.25).
"""
import numbers

import numpy as np

__all__ = ["dense_bias", "allowed", "score_mod", "mask_mod", "block_sparsity", "block_mask",
           "sdpa_mask", "mha_mask", "bool_mask", "hf_mask", "hf_attention", "hf_register",
           "numpy_arrays", "BLOCK_EMPTY", "BLOCK_PARTIAL", "BLOCK_FULL"]

#: block_sparsity's kinds of block.
BLOCK_EMPTY, BLOCK_PARTIAL, BLOCK_FULL = 0, 1, 2


def _log_sigmoid(m):
    return -np.logaddexp(0.0, -m)


def numpy_arrays(compiled):
    """The arrays of a CompiledMask for JAX or NumPy: {"bias": float32 [L, H, N, N] = log σ(M)
    with −inf on hard cells, "allowed": bool [N, N] (not hard), "mask": the logits M}. Pass the
    bias to jax.nn.dot_product_attention(q, k, v, bias=bias[layer][None]) (q: [B, N, H, d])."""
    m = np.asarray(compiled.mask, dtype=np.float32)
    hard = np.zeros(m.shape[-2:], bool) if compiled.hard is None else np.asarray(compiled.hard,
                                                                                   bool)
    bias = _log_sigmoid(m.astype(np.float64)).astype(np.float32)
    bias[..., hard] = -np.inf
    return {"bias": bias, "allowed": ~hard, "mask": m}


def dense_bias(prior, layer=None):
    """The additive bias as a float32 torch tensor: [L, H, N, N] (the prior's own L and H: a
    spec's shared M stays [1, 1, N, N]; a MaskPrior's is its model's), or [H, N, N] of `layer`.

    A learnable MaskPrior's (or MaskedTransformer's) bias keeps its autograd graph, and so do
    sdpa_mask, mha_mask and hf_mask built from it: computed inside a model's forward, M trains
    with the model (requires_grad is True). Call .detach() on the result for a constant mask, or
    build it under torch.no_grad(). A CompiledMask's bias is a constant."""
    import torch
    from .torch import MaskPrior, MaskedTransformer
    if isinstance(prior, MaskPrior):
        bias = prior.bias()
    elif isinstance(prior, MaskedTransformer):
        bias = prior.attention_bias()
        if bias is None:
            bias = torch.zeros(1, 1, prior.seq_len, prior.seq_len)
    else:
        bias = torch.from_numpy(numpy_arrays(prior)["bias"])
    return bias if layer is None else _bias_layer(bias, layer)


def _bias_layer(bias, layer):
    """Layer `layer` of a dense bias [L, H, N, N]: [H, N, N] (a layer-shared bias serves any)."""
    from .torch import _layer_index
    return bias[_layer_index(bias, layer, max(bias.shape[0], layer + 1))]


def allowed(prior):
    """bool [N, N]: the cells a query may attend to (not hard; not causal for a causal model)."""
    import torch
    from .torch import MaskPrior, MaskedTransformer
    if isinstance(prior, MaskPrior):
        return ~prior.hard
    if isinstance(prior, MaskedTransformer):
        excluded = prior._excluded()
        return (torch.ones(prior.seq_len, prior.seq_len, dtype=torch.bool) if excluded is None
                else ~excluded)
    return torch.from_numpy(numpy_arrays(prior)["allowed"])


def score_mod(prior, layer=0):
    """FlexAttention's score_mod for one layer: score + bias[h, q_idx, kv_idx] (a head-shared
    bias is read at head 0). The bias is taken now: build a new score_mod after M changes (or
    use MaskPrior's bias inside your own score_mod to train M)."""
    bias = dense_bias(prior, layer).detach()
    shared = bias.shape[0] == 1

    def mod(score, b, h, q_idx, kv_idx):
        head = h * 0 if shared else h
        return score + bias[head, q_idx, kv_idx].to(score.dtype)

    return mod


def mask_mod(prior):
    """FlexAttention's mask_mod: True where a query may attend (the cells that are not hard)."""
    keep = allowed(prior)

    def mod(b, h, q_idx, kv_idx):
        return keep[q_idx, kv_idx]

    return mod


#: The largest block_size, as `maskc export --block-size` takes it.
MAX_BLOCK_SIZE = 1 << 20


def _check_block_size(block_size):
    """TypeError unless block_size is an int, ValueError unless it is in 1..2^20 (as `maskc
    export --block-size` checks it)."""
    if isinstance(block_size, bool) or not isinstance(block_size, numbers.Integral):
        raise TypeError("block_size: expected an int, got %r" % (block_size,))
    if not 1 <= block_size <= MAX_BLOCK_SIZE:
        raise ValueError("block_size is %d; it must be from 1 to %d" % (block_size, MAX_BLOCK_SIZE))


def block_sparsity(prior, block_size=128):
    """The data of a FlexAttention BlockMask, from the hard cells: per block of block_size query
    rows × block_size key columns (the last ones shorter when N is not a multiple) its kind
    (BLOCK_EMPTY: no cell allowed, BLOCK_FULL: every cell, BLOCK_PARTIAL: some), and, shaped
    [1, 1, Q] and [1, 1, Q, K] as BlockMask.from_kv_blocks takes them: kv_num_blocks and
    kv_indices of the partial blocks, full_kv_num_blocks and full_kv_indices of the full ones
    (indices in ascending order, then padded with 0). Returns a dict of int32 tensors."""
    import torch
    _check_block_size(block_size)
    keep = allowed(prior)
    n = keep.shape[-1]
    block_size = min(block_size, n)  # one block either way; padded to N, not to block_size
    blocks = -(-n // block_size)
    pad = blocks * block_size - n
    padded = torch.nn.functional.pad(keep.float(), (0, pad, 0, pad))
    count = padded.view(blocks, block_size, blocks, block_size).sum(dim=(1, 3))
    sizes = torch.tensor([min(block_size, n - i * block_size) for i in range(blocks)])
    cells = (sizes.view(-1, 1) * sizes.view(1, -1)).float()
    kind = torch.where(count == 0, BLOCK_EMPTY, torch.where(count == cells, BLOCK_FULL,
                                                            BLOCK_PARTIAL))
    out = {"kind": kind.to(torch.int32)}
    for prefix, which in (("", BLOCK_PARTIAL), ("full_", BLOCK_FULL)):
        hit = kind == which
        order = torch.argsort((~hit).int() * blocks + torch.arange(blocks), dim=1)
        num = hit.sum(1)
        indices = torch.where(torch.arange(blocks) < num.view(-1, 1), order, 0)
        out[prefix + "kv_num_blocks"] = num.to(torch.int32).view(1, 1, blocks)
        out[prefix + "kv_indices"] = indices.to(torch.int32).view(1, 1, blocks, blocks)
    return out


def block_mask(prior, block_size=128, device="cpu"):
    """A FlexAttention BlockMask of the prior's hard cells (BlockMask.from_kv_blocks with
    block_sparsity's data and mask_mod); needs PyTorch with FlexAttention (≥ 2.5)."""
    try:
        from torch.nn.attention.flex_attention import BlockMask
    except ImportError as e:
        import torch
        raise ImportError("block_mask needs FlexAttention (torch.nn.attention.flex_attention, "
                          "PyTorch >= 2.5); this is PyTorch %s: upgrade it, or use sdpa_mask "
                          "or bool_mask" % torch.__version__) from e
    data = {k: v.to(device) for k, v in block_sparsity(prior, block_size).items() if k != "kind"}
    args = (data["kv_num_blocks"], data["kv_indices"], data["full_kv_num_blocks"],
            data["full_kv_indices"])
    n = allowed(prior).shape[-1]
    try:  # PyTorch >= 2.6 takes the true lengths (N need not be a multiple of the block size)
        return BlockMask.from_kv_blocks(*args, BLOCK_SIZE=block_size, mask_mod=mask_mod(prior),
                                        seq_lengths=(n, n))
    except TypeError:
        return BlockMask.from_kv_blocks(*args, BLOCK_SIZE=block_size, mask_mod=mask_mod(prior))


def sdpa_mask(prior, layer=0, dtype=None):
    """The float attn_mask of F.scaled_dot_product_attention for q, k, v [B, H, N, d]:
    [1, H or 1, N, N] (it broadcasts over the batch; −inf on hard cells)."""
    bias = dense_bias(prior, layer).unsqueeze(0)
    return bias if dtype is None else bias.to(dtype)


def mha_mask(prior, layer=0, batch=1, dtype=None):
    """The float attn_mask of nn.MultiheadAttention (batch_first or not): [N, N] when every head
    shares the bias, else [batch · H, N, N] (row b · H + h is head h of sequence b, as
    nn.MultiheadAttention lays them out)."""
    bias = dense_bias(prior, layer)
    out = bias[0] if bias.shape[0] == 1 else bias.repeat(batch, 1, 1)
    return out if dtype is None else out.to(dtype)


def bool_mask(prior, convention="sdpa"):
    """bool [N, N] of the hard cells in one API's convention: "sdpa" (and FlexAttention's
    mask_mod, JAX's `mask`): True = may attend; "mha" (nn.MultiheadAttention, nn.Transformer):
    True = may NOT attend. A boolean mask carries no prior, only the hard cells."""
    keep = allowed(prior)
    if convention == "sdpa":
        return keep
    if convention == "mha":
        return ~keep
    raise ValueError("convention must be 'sdpa' or 'mha', got %r" % (convention,))


def hf_mask(prior, attention_mask=None, layer=0, per_head=None, dtype=None, causal=False):
    """A Hugging Face 4-D additive attention mask [B, 1 or H, N, N]: the prior's bias plus, for
    each padded key (attention_mask [B, N] with 0 = padding, 1 = token), the dtype's most
    negative value; −inf becomes that value too, as transformers' own masks hold it. per_head
    (default: whether the bias differs between heads) chooses [B, H, N, N] over [B, 1, N, N].
    attention_mask may be of any dtype (bool, int, float); another shape than [B, N] is a
    ValueError, a dtype that is not floating (int32) a TypeError.

    transformers (5.x: masking_utils.create_causal_mask) passes a 4-D mask through as it is, in
    place of the causal and padding masks it would build: a decoder's spec must say
    `hard causal`, or pass causal=True to mask the keys after each query here."""
    import torch
    dtype = dtype or torch.float32
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError("hf_mask: dtype must be a floating torch dtype (float32, float16, "
                        "bfloat16), got %r" % (dtype,))
    bias = dense_bias(prior, layer).to(dtype)
    if per_head is None:
        per_head = bias.shape[0] > 1
    if not per_head and bias.shape[0] > 1:
        raise ValueError("the bias differs between heads; a [B, 1, N, N] mask cannot hold it")
    if not per_head:
        bias = bias[:1]
    lowest = torch.finfo(dtype).min
    if causal:
        n = bias.shape[-1]
        future = torch.ones(n, n, dtype=torch.bool, device=bias.device).triu(1)
        bias = bias.masked_fill(future, float("-inf"))
    bias = bias.clamp(min=lowest).unsqueeze(0)
    if attention_mask is None:
        return bias
    attention_mask = torch.as_tensor(attention_mask)
    n = bias.shape[-1]
    if attention_mask.dim() != 2 or attention_mask.shape[1] != n:
        raise ValueError("hf_mask: attention_mask must be [batch, %d] (1 = token, 0 = padding), "
                         "as a tokenizer gives it; got shape %s" % (n, list(attention_mask.shape)))
    padded = attention_mask.to(bias.device) == 0  # [B, N]
    return bias.masked_fill(padded[:, None, None, :], lowest)


def _layer_bias(prior):
    """layer -> [H or 1, N, N]: a MaskPrior's bias as the autograd graph holds it (M trains),
    anything else's dense bias, taken now."""
    from .torch import MaskPrior
    if isinstance(prior, MaskPrior):
        return prior
    bias = dense_bias(prior)
    return lambda layer: _bias_layer(bias, layer)


def hf_attention(prior):
    """An attention function for transformers' AttentionInterface (5.x), with the signature of
    its "eager" and "sdpa" ones: fn(module, query, key, value, attention_mask, scaling=None,
    dropout=0.0, **kwargs) -> (output [B, N, H, d], weights [B, H, N, N]) for query, key and
    value [B, H (or key-value heads), N, d]. It computes softmax(scaling · QKᵀ + attention_mask
    + bias[module.layer_idx]) V, with the bias of the prior's layer (a MaskPrior's keeps its
    gradient, so M trains with the model); a query block shorter than the keys (decoding with
    a cache) reads the bias's last rows. The model's own causal and padding mask comes in
    attention_mask: register the function with hf_register, which also gives transformers the
    mask function to build it."""
    import torch
    bias_of = _layer_bias(prior)

    def attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0,
                  **kwargs):
        groups = query.shape[1] // key.shape[1]
        if groups > 1:  # grouped-query attention: each key-value head serves `groups` heads
            key, value = (t.repeat_interleave(groups, dim=1) for t in (key, value))
        q_len, kv_len = query.shape[-2], key.shape[-2]
        layer = getattr(module, "layer_idx", None)
        if layer is None:
            raise ValueError("maskprior attention: %s has no layer_idx" % type(module).__name__)
        bias = bias_of(layer)
        if kv_len > bias.shape[-1] or bias.shape[0] not in (1, query.shape[1]):
            raise ValueError("maskprior attention: the prior's bias %s does not fit %d heads "
                             "over %d keys" % (list(bias.shape), query.shape[1], kv_len))
        bias = bias[:, kv_len - q_len:kv_len, :kv_len].to(query.device, query.dtype)
        if scaling is None:
            scaling = query.shape[-1] ** -0.5
        scores = query @ key.transpose(-2, -1) * scaling + bias
        if attention_mask is not None and attention_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attention_mask, torch.finfo(scores.dtype).min)
        elif attention_mask is not None:
            scores = scores + attention_mask[..., :kv_len]
        weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
        weights = torch.nn.functional.dropout(weights, p=dropout, training=module.training)
        return (weights @ value).transpose(1, 2).contiguous(), weights

    return attention


def hf_register(prior, name="maskprior"):
    """Registers hf_attention(prior) as the attention implementation `name` in transformers'
    AttentionInterface, and transformers' eager mask function (0 / the dtype's most negative
    value, causal and padding) for it in AttentionMaskInterface: without one, transformers
    builds no mask for an implementation it does not know and a decoder would see the future.
    Returns name, for

        model = AutoModelForCausalLM.from_config(config, attn_implementation=hf_register(prior))

    The registries are global: registering another prior under the same name replaces it for
    every model that uses the name. Train M by giving the prior's parameters to the optimizer
    (they are not the model's). Pass the model a 2-D padding mask (or none), not hf_mask's 4-D
    one, which would add the bias twice."""
    if "/" in name or ":" in name:  # transformers reads such a name as a kernel on the Hub
        raise ValueError("hf_register: name %r may hold neither '/' nor ':'" % (name,))
    from transformers import AttentionInterface, AttentionMaskInterface
    from transformers.masking_utils import eager_mask
    AttentionInterface.register(name, hf_attention(prior))
    AttentionMaskInterface.register(name, eager_mask)
    return name
