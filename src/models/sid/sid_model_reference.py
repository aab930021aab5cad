#!/usr/bin/env python3
"""Reference values of models/sid/sid_rqvae_test.cc: a whole SidRqvae training and evaluation step
written independently with plain PyTorch from TorchEasyRec's description (tzrec/models/sid_rqvae.py,
sid_model.py and the SID modules and losses): encoder MLP -> residual vector quantizer (STE with
Sinkhorn codes in training, nearest codes in evaluation) -> decoder MLP, the reconstruction,
commitment and pair contrastive losses, their gradients, and the eval metrics. Every parameter
is set to pattern(shape, 0.3 * i + 0.1) in the order PARAMS lists (the C++ test does the same).

Run: /usr/bin/python3 src/models/sid/sid_model_reference.py
"""
import math

import torch
import torch.nn.functional as F


def pattern(shape, phase):
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(n, dtype=torch.float32) * 0.37 + phase).sin().mul(0.5).reshape(shape)


def c_float(v):
    s = "%.8g" % v
    return s + (".0f" if all(ch not in s for ch in ".en") else "f")


def show(name, t):
    t = torch.as_tensor(t)
    if t.dtype in (torch.int64, torch.bool):
        vals = ", ".join(str(int(v)) for v in t.flatten().tolist())
    else:
        vals = ", ".join(c_float(v) for v in t.flatten().tolist())
    print("%s %s: {%s}" % (name, list(t.shape), vals))


PARAMS = [
    ("_encoder.0.mlp.0.perceptron.0.weight", [4, 6]), ("_encoder.0.mlp.0.perceptron.0.bias", [4]),
    ("_encoder.1.weight", [3, 4]), ("_encoder.1.bias", [3]),
    ("_decoder.0.mlp.0.perceptron.0.weight", [4, 3]), ("_decoder.0.mlp.0.perceptron.0.bias", [4]),
    ("_decoder.1.weight", [6, 4]), ("_decoder.1.bias", [6]),
    ("_quantizer.layers.0.embedding.weight", [4, 3]), ("_quantizer.layers.1.embedding.weight", [3, 3]),
]


def params():
    return {n: pattern(s, 0.3 * i + 0.1).requires_grad_(True) for i, (n, s) in enumerate(PARAMS)}


def sinkhorn_codes(d, iters=5, eps=10.0):
    std, mean = torch.std_mean(d, unbiased=False)
    z = (d - mean) / (std + 1e-12)
    z = z - z.min()
    q = torch.exp(-z * eps).t()
    b, k = q.shape[1], q.shape[0]
    q = q / (q.sum() + 1e-8)
    for _ in range(iters):
        q = q / (q.sum(1, keepdim=True) + 1e-8) / k
        q = q / (q.sum(0, keepdim=True) + 1e-8) / b
    return (q * b).t().argmax(-1)


def encode(p, x):
    h = F.relu(x @ p["_encoder.0.mlp.0.perceptron.0.weight"].t() + p["_encoder.0.mlp.0.perceptron.0.bias"])
    return h @ p["_encoder.1.weight"].t() + p["_encoder.1.bias"]


def decode(p, z):
    h = F.relu(z @ p["_decoder.0.mlp.0.perceptron.0.weight"].t() + p["_decoder.0.mlp.0.perceptron.0.bias"])
    return h @ p["_decoder.1.weight"].t() + p["_decoder.1.bias"]


def quantize(p, z, training):
    books = [p["_quantizer.layers.0.embedding.weight"], p["_quantizer.layers.1.embedding.weight"]]
    res, agg, codes, cum = z.detach(), torch.zeros_like(z), [], []
    for w in books:
        with torch.no_grad():
            d = torch.cdist(res, w).pow(2)
            ids = sinkhorn_codes(d) if training else d.argmin(-1)
        q = w[ids]
        codes.append(ids)
        agg = agg + q
        cum.append(agg)
        res = res - q.detach()
    out = z + (agg - z).detach() if training else agg
    return torch.stack(codes, -1), out, torch.stack(cum, 1)


def rqvae(p, x, training):
    z = encode(p, x)
    codes, q, lat = quantize(p, z, training)
    return z, codes, lat, decode(p, q)


def commitment(z, lat):
    x = z.unsqueeze(1)
    return 1.0 * (x - lat.detach()).pow(2).mean() + 0.5 * (x.detach() - lat).pow(2).mean()


def contrastive(a, b, ao, bo, mask):
    s = torch.tensor(math.log(1 / 0.07)).exp()
    n = a.size(0)
    a, b = F.normalize(a, dim=-1), F.normalize(b, dim=-1)
    col = (~mask).unsqueeze(0)
    safe = torch.where(mask, torch.arange(n), mask.long().argmax().expand(n))
    mf = mask.float()
    nv = mf.sum().clamp(min=1)
    loss = a.new_zeros(())
    for ta, tb in ((b, a), (bo, ao), (ao, bo)):
        la = (s * a @ ta.t()).masked_fill(col, torch.finfo(torch.float32).min)
        lb = (s * b @ tb.t()).masked_fill(col, torch.finfo(torch.float32).min)
        loss = loss + ((F.cross_entropy(la, safe, reduction="none") + F.cross_entropy(lb, safe, reduction="none"))
                       * mf).sum() / (2 * nv)
    return loss / 3


X = pattern([8, 6], 2.0) * 2
PAIR = pattern([8, 6], 3.1) * 2
FLAG = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0])

print("== rqvae training step")
p = params()
z, codes, lat, x_hat = rqvae(p, X, True)
recon = ((x_hat - X) ** 2).mean(-1).mean()
commit = commitment(z, lat)
show("train codes", codes)
show("train recon_loss", recon.detach())
show("train commitment_loss", commit.detach())
(recon + commit).backward()
show("grad encoder first weight", p["_encoder.0.mlp.0.perceptron.0.weight"].grad)
show("grad codebook 0", p["_quantizer.layers.0.embedding.weight"].grad)
show("grad decoder last bias", p["_decoder.1.bias"].grad)

print("== rqvae evaluation")
# Codebook 0 set to the encodings of rows 0, 2, 3 and 7, so that the rows get different codes.
with torch.no_grad():
    pe = params()
    pe["_quantizer.layers.0.embedding.weight"].copy_(encode(pe, X)[[0, 2, 3, 7]])
    z, codes, lat, x_hat = rqvae(pe, X, False)
show("eval codes", codes)
show("eval mse", ((x_hat - X) ** 2).mean())
rel = ((X - x_hat).abs() / (torch.maximum(X.abs(), x_hat.abs()) + 1e-4)).mean()
show("eval rel_loss", rel)
show("eval unique_sid_ratio", torch.tensor(torch.unique(codes, dim=0).shape[0] / 8.0))

print("== rqvae contrastive training step")
p = params()
mask = FLAG > 0.5
z1, codes1, lat1, xh1 = rqvae(p, X, True)
z2, codes2, lat2, xh2 = rqvae(p, PAIR, True)
rm = (~mask).float()
recon = (((xh1 - X) ** 2).mean(-1) * rm).sum() / rm.sum()
commit = commitment(torch.cat([z1, z2]), torch.cat([lat1, lat2]))
con = contrastive(xh1, xh2, X, PAIR, mask)
show("contrastive codes", codes1)
show("contrastive recon_loss", recon.detach())
show("contrastive commitment_loss", commit.detach())
show("contrastive contrastive_loss", con.detach())
(recon + commit + con).backward()
show("contrastive grad encoder first weight", p["_encoder.0.mlp.0.perceptron.0.weight"].grad)
show("contrastive grad decoder last bias", p["_decoder.1.bias"].grad)
with torch.no_grad():
    _, _, _, xe = rqvae(params(), X, False)
    m = ~mask
    show("contrastive eval mse (non-pair rows)", ((xe[m] - X[m]) ** 2).mean())
