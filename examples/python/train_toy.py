#!/usr/bin/env python3
"""A one-layer Transformer with a learnable mask prior on parity2 (y = x0·x1 over n = 6 bits ±1).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_toy.py   # a few seconds on CPU
"""
import itertools, math, os, torch
import maskprior
from maskprior.torch import MaskPrior, mask_drift, prior_mass

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
torch.manual_seed(0)
compiled = maskprior.compile(os.path.join(ROOT, "specs/gotu/parity2.mask"), params={"n": 6},
                             open=2.0, close=-2.0)   # a soft prior that training can move
bits = torch.tensor(list(itertools.product([-1.0, 1.0], repeat=6)))   # all 64 inputs
x = torch.cat([torch.zeros(64, 1), bits], dim=1).unsqueeze(-1)      # [B, N=7, 1], token 0 is cls
y = bits[:, 0] * bits[:, 1]

class Toy(torch.nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.prior, self.d = MaskPrior(compiled), d
        self.embed, self.pos = torch.nn.Linear(1, d), torch.nn.Parameter(torch.randn(7, d) * 0.5)
        self.qkv, self.mlp = torch.nn.Linear(d, 3 * d), torch.nn.Sequential(
            torch.nn.Linear(d, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))

    def forward(self, x):
        h = self.embed(x) + self.pos
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        attn = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d) + self.prior(0, 0), -1)
        h = h + attn @ v
        return self.mlp(h[:, 0]).squeeze(-1), attn.unsqueeze(1)        # attn [B, H=1, N, N]

model = Toy()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
with torch.no_grad():
    print("prior mass before: %.3f" % prior_mass(model(x)[1], compiled))
for step in range(300):
    pred, _ = model(x)
    loss = torch.nn.functional.mse_loss(pred, y)
    opt.zero_grad(); loss.backward(); opt.step()
with torch.no_grad():
    pred, attn = model(x)
    print("loss %.4f  accuracy %.2f" % (loss.item(), (pred.sign() == y).float().mean().item()))
    print("prior mass after:  %.3f  mask drift %.3f" % (prior_mass(attn, compiled),
                                                        mask_drift(model.prior)[0].item()))
