#!/usr/bin/env python3
"""Reference values of the nn/sid/ unit tests, computed independently with plain PyTorch and
numpy from the descriptions of TorchEasyRec's SID modules (tzrec/modules/sid/*.py) and of faiss's
k-means (faiss/Clustering.cpp, faiss/utils/random.cpp): Sinkhorn, the vector-quantize layer
(distances, STE / Sinkhorn / Gumbel assignment, kaiming init), the k-means layer, the reservoir
sampler, faiss's rand_perm and k-means (a line-by-line Python port of the algorithm with its
std::mt19937 streams, written in pure Python here), the residual quantizers, the rotation trick
and candidate SIDs. The C++ tests use the same inputs (pattern() below, fixed seeds) and hold the
numbers this script prints.

Run: /usr/bin/python3 src/nn/sid/sid_reference.py
"""
import math

import numpy as np
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
    if t.dtype in (torch.int64, torch.int32, torch.bool):
        vals = ", ".join(str(int(v)) for v in t.flatten().tolist())
    else:
        vals = ", ".join(c_float(v) for v in t.flatten().tolist())
    print("%s %s: {%s}" % (name, list(t.shape), vals))


# ---------------------------------------------------------------- Sinkhorn
def sinkhorn(cost, iters, eps):
    q = torch.exp(-cost * eps).t()
    b, k = q.shape[1], q.shape[0]
    q = q / (q.sum() + 1e-8)
    for _ in range(iters):
        q = q / (q.sum(dim=1, keepdim=True) + 1e-8)
        q = q / k
        q = q / (q.sum(dim=0, keepdim=True) + 1e-8)
        q = q / b
    return (q * b).t()


def sinkhorn_codes(d, iters, eps):
    std, mean = torch.std_mean(d, unbiased=False)
    z = (d - mean) / (std + 1e-12)
    z = z - z.min()
    return sinkhorn(z, iters, eps).argmax(-1)


print("== sinkhorn")
cost = pattern([5, 3], 0.3).abs() * 2
show("sinkhorn(cost, 3, 2.0)", sinkhorn(cost, 3, 2.0))
# Distances where every row prefers code 0: argmin puts all rows there, Sinkhorn spreads them.
dist = torch.tensor([[0.1, 0.5, 0.9], [0.2, 0.6, 0.7], [0.1, 0.3, 0.8], [0.15, 0.4, 0.5],
                     [0.05, 0.9, 0.95], [0.3, 0.35, 0.6]])
show("argmin", dist.argmin(-1))
show("sinkhorn_codes(dist, 5, 10)", sinkhorn_codes(dist, 5, 10.0))


# ---------------------------------------------------------------- vector-quantize layer
def vq_distances(x, w, kind):
    if kind == "l2":
        return torch.cdist(x, w, p=2).pow(2)
    return -torch.matmul(F.normalize(x, p=2, dim=1), F.normalize(w, p=2, dim=1).t())


print("== vector quantize layer")
torch.manual_seed(0)
emb = torch.nn.Embedding(4, 3)
torch.nn.init.kaiming_uniform_(emb.weight)
show("kaiming init weight (seed 0)", emb.weight.detach())

W = pattern([4, 3], 1.1)
X = pattern([5, 3], 0.2)
show("l2 distances", vq_distances(X, W, "l2"))
show("cosine distances", vq_distances(X, W, "cosine"))
d = vq_distances(X, W, "l2")
s, i = torch.topk(d, 2, dim=-1, largest=False)
show("eval top2 ids", i)
show("eval top2 scores", s)
show("ste train ids without sinkhorn", d.argmin(-1))
show("ste train ids with sinkhorn(5, 10)", sinkhorn_codes(d, 5, 10.0))
# Gumbel: hard gumbel_softmax after manual_seed(3), tau 0.5, then (emb * G).sum() backward.
w = W.clone().requires_grad_(True)
x = X.clone().requires_grad_(True)
torch.manual_seed(3)
logits = -vq_distances(x, w, "l2")
g = F.gumbel_softmax(logits, tau=0.5, hard=True, dim=-1)
e = g @ w
show("gumbel ids", g.argmax(-1))
show("gumbel embeddings", e.detach())
(e * pattern([5, 3], 2.0)).sum().backward()
show("gumbel grad x", x.grad)
show("gumbel grad weight", w.grad)


# ---------------------------------------------------------------- faiss rand_perm and k-means
class MT19937:
    """std::mt19937 (init_genrand seeding, 32-bit outputs)."""

    def __init__(self, seed):
        self.mt = [0] * 624
        self.mt[0] = seed & 0xFFFFFFFF
        for i in range(1, 624):
            self.mt[i] = (1812433253 * (self.mt[i - 1] ^ (self.mt[i - 1] >> 30)) + i) & 0xFFFFFFFF
        self.idx = 624

    def __call__(self):
        if self.idx >= 624:
            for i in range(624):
                y = (self.mt[i] & 0x80000000) | (self.mt[(i + 1) % 624] & 0x7FFFFFFF)
                v = self.mt[(i + 397) % 624] ^ (y >> 1)
                if y & 1:
                    v ^= 0x9908B0DF
                self.mt[i] = v
            self.idx = 0
        y = self.mt[self.idx]
        self.idx += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        return y


def rand_perm(n, seed):
    perm = list(range(n))
    rng = MT19937(seed & 0xFFFFFFFF)
    for i in range(n - 1):
        i2 = i + rng() % (n - i)
        perm[i], perm[i2] = perm[i2], perm[i]
    return perm


def search(x, c, ip):
    """faiss IndexFlatL2 / IndexFlatIP search with k=1, as the engine computes distances."""
    prod = torch.mm(torch.from_numpy(x), torch.from_numpy(c).t())
    if ip:
        v, a = prod.max(1)
    else:
        xn = torch.from_numpy(x).pow(2).sum(1, keepdim=True)
        cn = torch.from_numpy(c).pow(2).sum(1).unsqueeze(0)
        v, a = (xn + cn - 2 * prod).clamp_min(0).min(1)
    return a.numpy(), v.numpy()


def renorm(c):
    for i in range(c.shape[0]):
        nr = np.float32(0)
        for j in range(c.shape[1]):
            nr = np.float32(nr + c[i, j] * c[i, j])
        if nr > 0:
            inv = np.float32(1.0 / math.sqrt(float(nr)))
            c[i] = c[i] * inv


def kmeans(x_in, k, niter=25, nredo=1, spherical=False, minp=39, maxp=256, seed=1234):
    x_in = np.ascontiguousarray(x_in, dtype=np.float32)
    n, d = x_in.shape
    x = x_in
    if n > k * maxp:
        perm = rand_perm(n, seed)
        n = k * maxp
        x = x_in[perm[:n]].copy()
    if n == k:
        return x_in[:k].copy(), [0.0]
    stats = []
    best_obj = -np.inf if spherical else np.inf
    best_c, best_stats = None, None
    eps = np.float32(1.0 / 1024.0)
    for redo in range(nredo):
        perm = rand_perm(n, seed + 1 + redo * 15486557)
        c = x[perm[:k]].copy()
        if spherical:
            renorm(c)
        obj = np.float32(0)
        for it in range(niter):
            assign, dis = search(x, c, spherical)
            obj = np.float32(0)
            for v in dis:
                obj = np.float32(obj + v)
            c = np.zeros((k, d), dtype=np.float32)
            hassign = np.zeros(k, dtype=np.float32)
            for i in range(n):
                a = assign[i]
                hassign[a] = np.float32(hassign[a] + np.float32(1))
                c[a] = c[a] + x[i]
            for ci in range(k):
                if hassign[ci] != 0:
                    c[ci] = c[ci] * np.float32(np.float32(1) / hassign[ci])
            rng = MT19937(1234)
            for ci in range(k):
                if hassign[ci] != 0:
                    continue
                cj, tries, found = 0, 0, False
                while tries < 10 * k:
                    p = np.float32((float(hassign[cj]) - 1.0) / float(np.float32(n - k)))
                    r = np.float32(rng()) / np.float32(4294967295)
                    if r < p:
                        found = True
                        break
                    tries += 1
                    cj = (cj + 1) % k
                if not found:
                    cj = int(np.argmax(hassign))
                c[ci] = c[cj]
                sign = np.array([1 if j % 2 == 0 else -1 for j in range(d)], dtype=np.float32)
                c[ci] = c[ci] * (np.float32(1) + sign * eps)
                c[cj] = c[cj] * (np.float32(1) - sign * eps)
                hassign[ci] = hassign[cj] / np.float32(2)
                hassign[cj] = hassign[cj] - hassign[ci]
            stats.append(float(obj))
            if spherical:
                renorm(c)
            if it > 0:
                prev = np.float32(stats[-2])
                change = np.inf if prev == 0 else abs(prev - obj) / abs(prev)
                if change <= 0:
                    break
        if nredo > 1 and ((not spherical and obj < best_obj) or (spherical and obj > best_obj)):
            best_c, best_stats, best_obj = c.copy(), list(stats), obj
    if nredo > 1:
        c, stats = best_c, best_stats
    return c, stats


print("== faiss rand_perm")
print("rand_perm(10, 1234):", rand_perm(10, 1234))
print("rand_perm(7, 1235):", rand_perm(7, 1235))


def clustered(n, d, centers, noise, phase):
    base = torch.stack([centers[i % centers.shape[0]] for i in range(n)])
    return (base + noise * pattern([n, d], phase)).numpy()


CENTERS = torch.tensor([[2.0, 0.0, 1.0, -1.0], [-2.0, 1.0, 0.0, 0.5], [0.0, -2.0, -1.0, 1.0],
                        [1.5, 1.5, -1.5, 0.0], [-1.0, -1.0, 2.0, 2.0]])
print("== k-means")
X1 = clustered(60, 4, CENTERS, 0.3, 0.7)
c, st = kmeans(X1, 5, niter=6)
show("fit(60 rows, k 5, niter 6) centroids", torch.from_numpy(c))
show("fit(60 rows, k 5, niter 6) objective", torch.tensor(st))
c, st = kmeans(X1, 3, niter=4, maxp=12, seed=7)  # 60 > 3 * 12: subsampled
show("subsampled centroids", torch.from_numpy(c))
show("subsampled objective", torch.tensor(st))
c, st = kmeans(X1, 4, niter=5, spherical=True, nredo=2, seed=11)
show("spherical centroids", torch.from_numpy(c))
show("spherical objective", torch.tensor(st))
# 8 distinct rows repeated: random initial centroids coincide, clusters go empty and are split.
X2 = np.repeat(clustered(8, 4, CENTERS, 0.5, 0.1), 5, axis=0)
c, st = kmeans(X2, 6, niter=5, seed=5)
show("split centroids", torch.from_numpy(c))
show("split objective", torch.tensor(st))


# ---------------------------------------------------------------- reservoir sampler
def reservoir(batches, cap, dim):
    buf = torch.empty(cap, dim)
    filled = seen = 0
    for x in batches:
        if filled < cap:
            take = min(x.shape[0], cap - filled)
            buf[filled:filled + take] = x[:take]
            filled += take
            seen += take
            x = x[take:]
            if x.shape[0] == 0:
                continue
        r = x.shape[0]
        pos = seen + torch.arange(r)
        accept = torch.rand(r) < (cap / (pos + 1).to(torch.float64))
        idx = accept.nonzero(as_tuple=True)[0]
        if idx.numel() > 0:
            slots = torch.randint(0, cap, (idx.numel(),))
            buf[slots] = x[idx]
        seen += r
    return buf[:filled], seen


print("== reservoir")
torch.manual_seed(42)
rows = torch.arange(60, dtype=torch.float32).reshape(30, 2)
s, seen = reservoir([rows[:4], rows[4:11], rows[11:30]], 6, 2)
show("reservoir(cap 6; batches 4, 7, 19 rows; seed 42)", s)
print("seen", seen)


# ---------------------------------------------------------------- residual quantizers
def walk(x, books, normalize, dist="l2"):
    res, agg, codes, cum = x, torch.zeros_like(x), [], []
    for w in books:
        if normalize:
            res = F.normalize(res, dim=-1)
        d = vq_distances(res, w, dist)
        ids = d.argmin(-1)
        q = w[ids]
        codes.append(ids)
        agg = agg + q
        cum.append(agg)
        res = res - q.detach()
    return torch.stack(codes, -1), agg, torch.stack(cum, 1), res


print("== residual vector quantizer")
B0 = pattern([4, 3], 0.5) * 2
B1 = pattern([3, 3], 1.7)
B2 = pattern([2, 3], 2.9) * 0.5
XR = pattern([6, 3], 0.9) * 1.5
codes, agg, lat, _ = walk(XR, [B0, B1, B2], False)
show("eval codes", codes)
show("eval quantized", agg)
show("eval latents", lat)
codes, agg, lat, _ = walk(XR, [B0, B1, B2], True)
show("normalize_residuals codes", codes)
show("normalize_residuals quantized", agg)
# candidates: last layer's top-2 of the walk's last residual
res = XR
for w in [B0, B1]:
    d = vq_distances(res, w, "l2")
    res = res - w[d.argmin(-1)]
d = vq_distances(res, B2, "l2")
s, i = torch.topk(d, 2, dim=-1, largest=False)
show("candidate last-layer ids", i)
show("candidate scores", s)
# rotation trick: value and gradient of (out * G).sum() wrt x
x = XR.clone().requires_grad_(True)
q = agg.detach()  # any quantized vectors
qd, xd = q, x.detach()
qn = torch.linalg.vector_norm(qd, dim=-1).unsqueeze(1)
xn = torch.linalg.vector_norm(xd, dim=-1).unsqueeze(1)
lam = qn / (xn + 1e-8)
xh = xd / (xn + 1e-8)
qh = qd / (qn + 1e-8)
r = F.normalize(xh + qh, p=2, dim=1)
xu = x.unsqueeze(1)
out = lam * (xu - 2 * (xu @ r.unsqueeze(2) @ r.unsqueeze(1)) + 2 * (xu @ xh.unsqueeze(2) @ qh.unsqueeze(1))).squeeze(1)
show("rotation value", out.detach())
(out * pattern([6, 3], 0.4)).sum().backward()
show("rotation grad x", x.grad)
# kmeans_init: residual k-means (niter 10, seed 123) of a batch
XB = clustered(40, 4, CENTERS, 0.4, 1.3)
res = XB.copy()
for k in (4, 3):
    c, _ = kmeans(res, k, niter=10, seed=123)
    show("kmeans_init layer centers k=%d" % k, torch.from_numpy(c))
    a, _ = search(res, c, False)
    res = res - c[a]

print("== residual k-means quantizer")
# train_offline on X1 with codebooks [5, 3], niter 6, seed 42; then assignment of X1[:6]
for normalize in (False, True):
    res = X1.copy()
    books = []
    for k in (5, 3):
        if normalize:
            res = F.normalize(torch.from_numpy(res), dim=-1).numpy()
        c, _ = kmeans(res, k, niter=6, seed=42)
        books.append(torch.from_numpy(c))
        a, _ = search(res, c, False)
        res = res - c[a]
    show("train_offline normalize=%s centroids 0" % normalize, books[0])
    show("train_offline normalize=%s centroids 1" % normalize, books[1])
    codes, agg, _, _ = walk(torch.from_numpy(X1[:6]), books, normalize)
    show("forward normalize=%s codes" % normalize, codes)
    show("forward normalize=%s quantized" % normalize, agg)
