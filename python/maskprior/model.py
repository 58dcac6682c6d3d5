"""maskc's masked Transformer in plain PyTorch (runtime/model.h, docs/settings.md): the same
architecture, settings and parameter names, so that a run's weights.safetensors loads into it
(maskprior.load_run). Use it through maskprior.torch.MaskedTransformer."""
import json
import math

import numpy as np
import torch
import torch.nn.functional as F


def _open_cells(m0, open_value, close_value, excluded=None):
    """The one open-cell rule of the package (maskc's core/cells.h `open_pattern`): cells of the
    initial prior `m0` nearer its open value than its close value, and not `excluded` (hard or
    causal cells, a bool tensor that broadcasts; None: none)."""
    pattern = (m0 - open_value).abs() < (m0 - close_value).abs()
    return pattern if excluded is None else pattern & ~excluded

__all__ = ["MaskedTransformer", "Block", "share_mask", "SHARINGS", "READOUTS"]

#: The choices of `--mask-sharing` (docs/settings.md): M as the spec gives it, one M per layer,
#: one per layer and head.
SHARINGS = ("spec", "layer", "head")
#: The readouts of runtime/model.h: CLS → one real number, every position → next-token logits
#: (a causal decoder), CLS → class logits.
READOUTS = ("cls_regression", "causal_lm", "cls_classify")


def _fits(m, layers, heads):
    return m.dim() == 4 and m.shape[0] in (1, layers) and m.shape[1] in (1, heads)


def share_mask(m, sharing, layers, heads):
    """M [L', H', N, N] spread for a model of `layers` and `heads` as the runtime's
    `--mask-sharing` does (runtime/init.h shared_mask): "spec" keeps it, "layer" gives
    [layers, H', N, N], "head" [layers, heads, N, N]; each copy starts from the spec's M of its
    layer and head. ValueError for an unknown choice or an M that does not fit the model."""
    if sharing not in SHARINGS:
        raise ValueError("sharing must be one of %s, got %r" % (", ".join(SHARINGS), sharing))
    if not _fits(m, layers, heads):
        raise ValueError("M of shape %s does not fit a model of %d layers and %d heads (expected "
                         "[1 or %d, 1 or %d, N, N])"
                         % (list(m.shape), layers, heads, layers, heads))
    if sharing == "spec":
        return m
    h = heads if sharing == "head" else m.shape[1]
    return m.expand(layers, h, *m.shape[2:]).contiguous()


def _layer_index(m, layer, layers):
    """The index into M's first dimension of model layer `layer` (0 for a shared M)."""
    if not -layers <= layer < layers:
        raise IndexError("layer %d is out of range for a model of %d layers" % (layer, layers))
    return 0 if m.shape[0] == 1 else layer % layers




def sinusoids(n, dim):
    """The sinusoidal position embedding [n, dim] of the runtime: PE(p, 2i) = sin(p /
    10000^(2i/dim)), PE(p, 2i + 1) = cos(p / 10000^(2i/dim)) (computed in float64)."""
    position = torch.arange(n, dtype=torch.float64).unsqueeze(1)
    even = torch.arange(0, dim, 2, dtype=torch.float64)
    angle = position * torch.pow(torch.tensor(10000.0, dtype=torch.float64), -even / dim)
    table = torch.zeros(n, dim, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)[:, :dim // 2]
    return table.float()


def rotate(x):
    """Rotary positions (RoPE) as the runtime turns queries and keys x [..., N, d_head]: with
    θ_i = 10000^(−2i/d_head), the pair (x_i, x_{i + d_head/2}) at position p turns by p·θ_i."""
    n, d = x.shape[-2], x.shape[-1]
    half = d // 2
    inverse = torch.pow(torch.tensor(10000.0, dtype=torch.float64),
                        torch.arange(half, dtype=torch.float64) * (-2.0 / d))
    angle = torch.arange(n, dtype=torch.float64).unsqueeze(1) * inverse
    cos = torch.cat([angle.cos(), angle.cos()], 1).to(x.dtype).to(x.device)
    sin = torch.cat([angle.sin(), angle.sin()], 1).to(x.dtype).to(x.device)
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin


def alibi(n, heads):
    """ALiBi's distances as the runtime adds them: −m_h · |i − j| with m_h = 2^(−8h/H), h = 1..H;
    [1, H, N, N] float."""
    slopes = torch.pow(2.0, torch.arange(1, heads + 1, dtype=torch.float64) * (-8.0 / heads))
    position = torch.arange(n, dtype=torch.float64)
    distance = (position.unsqueeze(1) - position.unsqueeze(0)).abs()
    return (-slopes.view(1, heads, 1, 1) * distance).float()


def _dropped(t, p, training):
    return F.dropout(t, p, training=True) if training and p > 0 else t


class Block(torch.nn.Module):
    """One block, pre-LN (x + Attn(LN(x)), then + MLP(LN(x))) or post-LN (x ← LN(x + Attn(x)),
    x ← LN(x + MLP(x))). Wq, Wk, Wv have a bias only with qkv_bias "yes"."""

    def __init__(self, dim, heads, head_dim, mlp, norm="pre", attn_dropout=0.0,
                 resid_dropout=0.0, activation="gelu", rope=False, qk_norm="none",
                 mlp_dropout=0.0, qkv_bias="no", attn_init="default"):
        super().__init__()
        inner = heads * head_dim
        self.rope = rope
        self.heads, self.head_dim, self.post_norm = heads, head_dim, norm == "post"
        self.attn_dropout, self.resid_dropout, self.activation = (attn_dropout, resid_dropout,
                                                                  activation)
        self.mlp_dropout = mlp_dropout
        self.ln_attention = torch.nn.LayerNorm(dim)
        self.wq = torch.nn.Linear(dim, inner, bias=qkv_bias == "yes")
        self.wk = torch.nn.Linear(dim, inner, bias=qkv_bias == "yes")
        self.wv = torch.nn.Linear(dim, inner, bias=qkv_bias == "yes")
        self.wo = torch.nn.Linear(inner, dim)
        if attn_init == "torch":  # nn.MultiheadAttention's: xavier on the packed in-projection
            bound = math.sqrt(6.0 / (dim + 3 * inner))
            with torch.no_grad():
                for w in (self.wq, self.wk, self.wv):
                    w.weight.uniform_(-bound, bound)
                    if w.bias is not None:
                        w.bias.zero_()
                self.wo.bias.zero_()
        self.ln_mlp = torch.nn.LayerNorm(dim)
        self.fc_in = torch.nn.Linear(dim, mlp)
        self.fc_out = torch.nn.Linear(mlp, dim)
        if qk_norm == "layer":  # over each head's d_head values, shared by the heads
            self.q_norm = torch.nn.LayerNorm(head_dim)
            self.k_norm = torch.nn.LayerNorm(head_dim)
        else:
            self.q_norm = self.k_norm = None

    def forward(self, x, bias=None, attention=None):
        """x [B, N, dim]; bias [H or 1, N, N] (or None) added to the scores; with `attention` (a
        list), appends the probabilities [B, H, N, N]."""
        b, n, _ = x.shape
        h = x if self.post_norm else self.ln_attention(x)

        def split(w):
            return w(h).view(b, n, self.heads, self.head_dim).transpose(1, 2)

        q, k, v = split(self.wq), split(self.wk), split(self.wv)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        if self.rope:
            q, k = rotate(q), rotate(k)
        scores = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(self.head_dim))
        if bias is not None:
            scores = scores + bias
        probs = torch.softmax(scores, dim=-1)
        if attention is not None:
            attention.append(probs.detach())
        probs = _dropped(probs, self.attn_dropout, self.training)
        mixed = (probs @ v).transpose(1, 2).reshape(b, n, -1)
        return self.finish(x, mixed)

    def finish(self, residual, attended):
        def mlp(h):
            inner = self.fc_in(h)
            inner = torch.relu(inner) if self.activation == "relu" else F.gelu(inner)
            inner = _dropped(inner, self.mlp_dropout, self.training)
            return _dropped(self.fc_out(inner), self.resid_dropout, self.training)

        attended = _dropped(self.wo(attended), self.resid_dropout, self.training)
        if self.post_norm:
            y = self.ln_attention(residual + attended)
            return self.ln_mlp(y + mlp(y))
        y = residual + attended
        return y + mlp(self.ln_mlp(y))


def _check_choice(name, value, allowed):
    if value not in allowed:
        raise ValueError("%s must be one of %s, got %r" % (name, ", ".join(allowed), value))


class MaskedTransformer(torch.nn.Module):
    """The model of `maskc train` (runtime/model.h). Inputs are token ids [B, N] (int64), or float
    patches [B, N − 1, patch_features] when patch_features > 0 (a learned CLS vector is token
    0); outputs are [B] (readout "cls_regression"), [B, N, vocab] logits ("causal_lm", causal
    attention) or [B, classes] logits ("cls_classify"). Attention is
    softmax(QKᵀ/√d_head + log σ(M) + hard(−∞) [+ causal(−∞)]) V with M installed by set_mask.
    The settings are those of docs/settings.md: pos_embedding (learned, sinusoidal, none, rope,
    alibi),
    pos_init_std, norm (pre, post), attn_dropout, resid_dropout, activation (gelu, relu), qk_norm
    (none, layer: a LayerNorm over each head's queries and keys before their product),
    mlp_dropout, qkv_bias (no, yes), attn_init (default, torch) and final_norm (yes, no)."""

    def __init__(self, *, vocab=3, seq_len=16, dim=256, depth=12, heads=6, head_dim=64, mlp=256,
                 readout="cls_regression", classes=0, patch_features=0, pos_embedding="learned",
                 pos_init_std=1.0, norm="pre", attn_dropout=0.0, resid_dropout=0.0,
                 activation="gelu", qk_norm="none", mlp_dropout=0.0, qkv_bias="no",
                 attn_init="default", final_norm="yes"):
        super().__init__()
        _check_choice("readout", readout, READOUTS)
        _check_choice("pos_embedding", pos_embedding,
                      ("learned", "sinusoidal", "none", "rope", "alibi"))
        if pos_embedding == "rope" and head_dim % 2:
            raise ValueError("rope positions need an even head_dim, got %r" % (head_dim,))
        _check_choice("norm", norm, ("pre", "post"))
        _check_choice("activation", activation, ("gelu", "relu"))
        _check_choice("qk_norm", qk_norm, ("none", "layer"))
        _check_choice("qkv_bias", qkv_bias, ("no", "yes"))
        _check_choice("attn_init", attn_init, ("default", "torch"))
        _check_choice("final_norm", final_norm, ("yes", "no"))
        if readout == "cls_classify" and classes <= 0:
            raise ValueError("classes must be positive, got %r" % (classes,))
        self.settings = dict(vocab=vocab, seq_len=seq_len, dim=dim, depth=depth, heads=heads,
                             head_dim=head_dim, mlp=mlp, readout=readout, classes=classes,
                             patch_features=patch_features, pos_embedding=pos_embedding,
                             pos_init_std=pos_init_std, norm=norm, attn_dropout=attn_dropout,
                             resid_dropout=resid_dropout, activation=activation,
                             qk_norm=qk_norm, mlp_dropout=mlp_dropout, qkv_bias=qkv_bias,
                             attn_init=attn_init, final_norm=final_norm)
        self.depth, self.heads, self.seq_len, self.readout = depth, heads, seq_len, readout
        self.patch_features, self.pos_embedding = patch_features, pos_embedding
        self._embeddings(vocab, seq_len, dim, patch_features, pos_embedding, pos_init_std)
        for layer in range(depth):
            self.add_module("block%d" % layer, Block(dim, heads, head_dim, mlp, norm, attn_dropout,
                                                     resid_dropout, activation,
                                                     pos_embedding == "rope", qk_norm,
                                                     mlp_dropout, qkv_bias, attn_init))
        self.ln_final = torch.nn.LayerNorm(dim) if final_norm == "yes" else torch.nn.Identity()
        outputs = {"cls_regression": 1, "cls_classify": classes, "causal_lm": vocab}[readout]
        self.head = torch.nn.Linear(dim, outputs)
        self.causal = self.mask = self.mask_init = self.hard = None
        if readout == "causal_lm":
            self._buffer("causal", torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1))
        self.open_value = self.close_value = None

    def _embeddings(self, vocab, seq_len, dim, patch_features, pos_embedding, pos_init_std):
        if patch_features > 0:
            self.patch_embedding = torch.nn.Linear(patch_features, dim)
            self.cls_embedding = torch.nn.Parameter(torch.randn(dim))
        else:
            self.token_embedding = torch.nn.Embedding(vocab, dim)
        if pos_embedding == "learned":
            self.position_embedding = torch.nn.Parameter(torch.randn(seq_len, dim) * pos_init_std)
        else:
            table = sinusoids(seq_len, dim) if pos_embedding == "sinusoidal" else torch.zeros(
                seq_len, dim)
            self.register_buffer("position_embedding", table)

    def _buffer(self, name, value):
        """Registers buffer `name` in place of the plain attribute (None) it was."""
        self.__dict__.pop(name, None)
        self.register_buffer(name, value)

    @property
    def blocks(self):
        return [getattr(self, "block%d" % layer) for layer in range(self.depth)]

    def set_mask(self, mask, learnable=True, sharing="spec"):
        """Installs the prior M: a CompiledMask (its hard cells too, and its open and close values
        for open_pattern) or a tensor [L', H', N, N], spread by `sharing` as `--mask-sharing`
        does; a parameter when learnable, else a buffer; a copy is kept as buffer mask_init."""
        compiled = None if isinstance(mask, torch.Tensor) else mask
        m = torch.tensor(np.asarray(compiled.mask)) if compiled is not None else mask
        m = share_mask(m.detach().float(), sharing, self.depth, self.heads).clone()
        if m.shape[-2:] != (self.seq_len, self.seq_len):
            raise ValueError("M of shape %s does not fit N = %d" % (list(m.shape), self.seq_len))
        if learnable:
            self.__dict__.pop("mask", None)
            self.mask = torch.nn.Parameter(m)
        else:
            self._buffer("mask", m)
        self._buffer("mask_init", m.clone())
        if compiled is not None:
            self.open_value = float(compiled.metadata["open"])
            self.close_value = float(compiled.metadata["close"])
            if compiled.hard is not None:
                self.set_hard_mask(torch.from_numpy(np.array(compiled.hard, dtype=bool)))

    def set_hard_mask(self, hard):
        """Installs a hard mask [N, N] (true = excluded) as buffer `hard`. ValueError if with the
        causal mask it leaves a query row no key."""
        hard = torch.as_tensor(hard).bool()
        if hard.shape != (self.seq_len, self.seq_len):
            raise ValueError("hard mask of shape %s does not fit N = %d"
                             % (list(hard.shape), self.seq_len))
        excluded = hard if self.causal is None else hard | self.causal
        if excluded.all(dim=1).any():
            raise ValueError("the hard mask excludes every key of query row %d"
                             % int(excluded.all(dim=1).nonzero()[0, 0]))
        self._buffer("hard", hard)

    def open_pattern(self):
        """bool [L', H', N, N]: cells of the initial M nearer its open value than its close value,
        not hard or causal (ValueError when the open and close values are unknown)."""
        if self.mask_init is None or self.open_value is None:
            raise ValueError("the model's prior has no known open and close values")
        return _open_cells(self.mask_init, self.open_value, self.close_value, self._excluded())

    def _excluded(self):
        if self.hard is None:
            return self.causal
        return self.hard if self.causal is None else self.hard | self.causal

    def attention_bias(self):
        """log σ(M) + (−inf on hard and causal cells) [+ alibi's distances]: [L' or 1, H' or 1,
        N, N], or None."""
        excluded = self._excluded()
        bias = None if self.mask is None else F.logsigmoid(self.mask)
        if excluded is not None:
            minus = torch.zeros(excluded.shape, device=excluded.device).masked_fill(
                excluded, float("-inf"))
            bias = minus.view(1, 1, *minus.shape) if bias is None else bias + minus
        if self.pos_embedding == "alibi":
            distances = alibi(self.seq_len, self.heads).to(self.position_embedding.device)
            bias = distances if bias is None else bias + distances
        return bias

    def embed(self, inputs):
        if self.patch_features > 0:
            cls = self.cls_embedding.view(1, 1, -1).expand(inputs.shape[0], 1, -1)
            return torch.cat([cls, self.patch_embedding(inputs)], 1) + self.position_embedding
        return self.token_embedding(inputs) + self.position_embedding

    def forward(self, inputs, attention=None):
        """The outputs of the readout; with `attention` (a list), appends each layer's attention
        probabilities [B, H, N, N]."""
        x = self.embed(inputs)
        bias = self.attention_bias()
        for layer, block in enumerate(self.blocks):
            these = None if bias is None else bias[_layer_index(bias, layer, self.depth)]
            x = block(x, these, attention)
        if self.readout == "causal_lm":
            return self.head(self.ln_final(x))
        out = self.head(self.ln_final(x[:, 0]))
        return out.squeeze(-1) if self.readout == "cls_regression" else out

    def generate(self, inputs, start):
        """Greedy decoding, as maskc evaluates a decoder (readout "causal_lm"): token ids [B, N]
        (or [N]) whose positions start, start + 1, ..., N - 1 are filled in turn, each with the
        argmax the model predicts at the row before it; what `inputs` holds there is not read.
        Returns a filled copy (the same shape; no gradients). ValueError for another readout, a
        length other than the model's N, or a start outside 1..N."""
        if self.readout != "causal_lm":
            raise ValueError("generate needs a decoder (readout causal_lm), not %s" % self.readout)
        ids = torch.as_tensor(inputs).clone().long()
        single = ids.dim() == 1
        if single:
            ids = ids.unsqueeze(0)
        if ids.dim() != 2 or ids.shape[1] != self.seq_len:
            raise ValueError("generate: inputs must be [batch, %d] token ids, got shape %s"
                             % (self.seq_len, list(ids.shape)))
        if not 1 <= start <= self.seq_len:
            raise ValueError("generate: start must be from 1 to %d, got %r" % (self.seq_len, start))
        ids = ids.to(self.position_embedding.device)
        with torch.no_grad():
            for position in range(start, self.seq_len):
                ids[:, position] = self.forward(ids)[:, position - 1].argmax(-1)
        return ids[0] if single else ids

    def attention_maps(self, inputs):
        """Each layer's attention probabilities [B, H, N, N] (no gradients)."""
        maps = []
        with torch.no_grad():
            self.forward(inputs, maps)
        return maps

    def extra_repr(self):
        m = "none" if self.mask is None else "%s %s" % (
            list(self.mask.shape), "learnable" if isinstance(self.mask, torch.nn.Parameter)
            else "fixed")
        return "%s, M=%s" % (json.dumps(self.settings), m)
