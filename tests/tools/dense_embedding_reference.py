#!/usr/bin/env python3
"""Reference values of TorchEasyRec's dense embeddings (AutoDisEmbedding, MLPEmbedding) for the unit
tests in src/embedding/autodis_embedding_test.cc and mlp_embedding_test.cc.

The formulas are written out here in numpy, in float64, from the AutoDis paper
(arXiv:2012.08986) as TorchEasyRec states them; nothing is shared with the engine. The
parameters are fixed functions of their indices (below), rounded to float32 as the engine stores
them; the tests set the same values and compare their outputs with what this script prints.

Run: /usr/bin/python3 tests/tools/dense_embedding_reference.py
"""
import numpy as np


def f32(x):
    return np.asarray(x, dtype=np.float32).astype(np.float64)


def autodis_params(n_features, channels, dim):
    meta = f32([[[np.sin(1.0 + 100 * n + 10 * c + d) for d in range(dim)] for c in range(channels)]
                for n in range(n_features)])
    proj_w = f32([[np.cos(2.0 + 7 * n + c) for c in range(channels)] for n in range(n_features)])
    proj_m = f32([[[0.3 * np.sin(3.0 + 31 * n + 5 * i + j) for j in range(channels)] for i in range(channels)]
                  for n in range(n_features)])
    return meta, proj_w, proj_m


def autodis(x, meta, proj_w, proj_m, temperature, keep_prob):
    b, n = x.shape
    out = []
    for row in range(b):
        embs = []
        for f in range(n):
            h = x[row, f] * proj_w[f]
            h = np.where(h > 0, h, 0.01 * h)  # leaky_relu, slope 0.01
            x_bar = proj_m[f] @ h + keep_prob * h
            z = x_bar / temperature
            z = np.exp(z - z.max())
            x_hat = z / z.sum()
            embs.append(x_hat @ meta[f])
        out.append(np.concatenate(embs))
    return np.array(out)


def mlp_params(n_features, dim):
    return f32([[0.25 * np.cos(1.0 + 13 * n + d) for d in range(dim)] for n in range(n_features)])


def mlp_vector_params(value_dim, dim):
    return f32([[0.2 * np.sin(0.5 + 3 * v + d) for d in range(dim)] for v in range(value_dim)])


def show(name, values):
    flat = ", ".join(f"{v:.8g}" for v in values.reshape(-1))
    print(f"{name} ({'x'.join(str(s) for s in values.shape)}): {{{flat}}}")


def main():
    x = f32([[0.5, -1.2], [2.0, 0.1], [-0.3, 0.0]])
    meta, proj_w, proj_m = autodis_params(2, 3, 4)
    show("autodis N=2 C=3 D=4 temperature=0.1f keep_prob=0.8f",
         autodis(x, meta, proj_w, proj_m, float(np.float32(0.1)), float(np.float32(0.8))))
    show("autodis N=2 C=3 D=4 temperature=0.5f keep_prob=0.25f",
         autodis(x, meta, proj_w, proj_m, float(np.float32(0.5)), float(np.float32(0.25))))
    w = mlp_params(2, 3)
    show("mlp N=2 D=3", (x[:, :, None] * w[None, :, :]).reshape(x.shape[0], -1))
    xv = f32([[0.5, -1.2, 3.0], [2.0, 0.1, -0.7]])
    wv = mlp_vector_params(3, 2)
    show("mlp value_dim=3 D=2", xv @ wv)


if __name__ == "__main__":
    main()
