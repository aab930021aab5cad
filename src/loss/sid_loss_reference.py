#!/usr/bin/env python3
"""Reference values of the SID loss tests (loss/sid_*_loss_test.cc), computed independently with
plain PyTorch from the descriptions of TorchEasyRec's SidReconLoss, SidCommitmentLoss and
SidContrastiveLoss (tzrec/loss/sid_*_loss.py): values and gradients on the inputs pattern() gives
(the same formula as nn/testing.h). The C++ tests hold the numbers this script prints.

Run: /usr/bin/python3 src/loss/sid_loss_reference.py
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
    print("%s %s: {%s}" % (name, list(t.shape), ", ".join(c_float(v) for v in t.flatten().tolist())))


def per_row(x_hat, x, kind):
    if kind == "l1":
        return (x_hat - x).abs().mean(-1)
    if kind == "cos":
        return 1 - F.cosine_similarity(x_hat, x, dim=-1)
    return ((x_hat - x) ** 2).mean(-1)


print("== recon")
mask = torch.tensor([True, False, True, True, False])
for kind in ("l2", "l1", "cos"):
    xh = pattern([5, 4], 0.3).requires_grad_(True)
    x = pattern([5, 4], 1.9)
    loss = per_row(xh, x, kind).mean()
    loss.backward()
    show("recon %s" % kind, loss.detach())
    show("recon %s grad" % kind, xh.grad)
    xh.grad = None
    rows = per_row(xh, x, kind)
    m = mask.float()
    masked = (rows * m).sum() / m.sum()
    masked.backward()
    show("recon %s masked" % kind, masked.detach())
    show("recon %s masked grad" % kind, xh.grad)

print("== commitment")
for kind in ("l2", "l1", "cos"):
    z = pattern([4, 3], 0.6).requires_grad_(True)
    lat = pattern([4, 2, 3], 2.2).requires_grad_(True)
    x = z.unsqueeze(1)
    if kind == "cos":
        l1 = (1 - F.cosine_similarity(x, lat.detach(), dim=-1)).mean()
        l2 = (1 - F.cosine_similarity(x.detach(), lat, dim=-1)).mean()
    elif kind == "l1":
        l1 = (x - lat.detach()).abs().mean()
        l2 = (x.detach() - lat).abs().mean()
    else:
        l1 = (x - lat.detach()).pow(2.0).mean()
        l2 = (x.detach() - lat).pow(2.0).mean()
    loss = 0.75 * l1 + 0.25 * l2
    loss.backward()
    show("commitment %s" % kind, loss.detach())
    show("commitment %s grad encoder" % kind, z.grad)
    show("commitment %s grad latents" % kind, lat.grad)

print("== contrastive")


def contrastive(a, b, a_ori, b_ori, pair_mask, scales):
    s_self, s_cl, s_ori = [s.clamp(max=math.log(100)).exp() for s in scales]
    n = a.size(0)
    labels = torch.arange(n)
    a = F.normalize(a, dim=-1, p=2)
    b = F.normalize(b, dim=-1, p=2)
    col_mask = (~pair_mask).unsqueeze(0)
    fallback = pair_mask.long().argmax()
    safe = torch.where(pair_mask, labels, fallback.expand_as(labels))
    mf = pair_mask.float()
    n_valid = mf.sum().clamp(min=1)
    loss = a.new_zeros(())
    for scale, ta, tb in ((s_self, b, a), (s_ori, b_ori, a_ori), (s_cl, a_ori, b_ori)):
        la = (scale * a @ ta.t()).masked_fill(col_mask, torch.finfo(torch.float32).min)
        lb = (scale * b @ tb.t()).masked_fill(col_mask, torch.finfo(torch.float32).min)
        ca = torch.nan_to_num(F.cross_entropy(la, safe, reduction="none"), nan=0.0)
        cb = torch.nan_to_num(F.cross_entropy(lb, safe, reduction="none"), nan=0.0)
        loss = loss + ((ca + cb) * mf).sum() / (2 * n_valid)
    return loss / 3


for name, mask in (("mixed", [True, False, True, True, False, True]), ("all pairs", [True] * 6),
                   ("no pairs", [False] * 6)):
    a = pattern([6, 4], 0.1).requires_grad_(True)
    b = pattern([6, 4], 0.8).requires_grad_(True)
    ao = pattern([6, 4], 1.5)
    bo = pattern([6, 4], 2.6)
    scales = [torch.tensor(math.log(1 / 0.07), requires_grad=True) for _ in range(3)]
    scales[1] = torch.tensor(1.2, requires_grad=True)   # cl
    scales[2] = torch.tensor(5.0, requires_grad=True)   # ori: clamped at ln 100
    loss = contrastive(a, b, ao, bo, torch.tensor(mask), scales)
    loss.backward()
    show("contrastive %s" % name, loss.detach())
    show("contrastive %s grad a" % name, a.grad)
    show("contrastive %s grad b" % name, b.grad)
    show("contrastive %s grad scales" % name, torch.stack([s.grad if s.grad is not None else torch.tensor(0.0)
                                                           for s in scales]))
