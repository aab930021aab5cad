#!/usr/bin/env python3
"""Plain PyTorch DSSM with an in-process negative sampler: the reference of bench/dssm_speed.sh.

gen:   writes OUT/train.csv, OUT/eval.csv (user_id, user_age, item_id, item_cate, clk; header) and
       OUT/items.txt (graphlearn's local format: id:int64, weight:float, attrs:string "item_id:cate")
       — users prefer one category (user_id * 7919 mod 100) and click items of it, so retrieval is
       learnable; items i have category i mod 100.
train: the model of bench/configs/dssm_b4096.config — one nn.EmbeddingBag(sum, sparse) per feature,
       user / item towers Linear+ReLU [256, 128] and Linear(128, 64), inner product, softmax cross
       entropy over [positive | 1024 negatives] with target 0; sparse Adagrad (lr 0.01) and Adam
       (lr 0.001). Negatives are drawn per batch from the item table's weights (torch.multinomial
       with replacement, as the alias method draws) and their attributes gathered; batches and
       negatives are built before timing, as the tzrec bench builds its batches. Prints one JSON
       line: samples/s over the timed steps, median step, recall@10 on the eval rows.
"""
import argparse
import json
import time

import numpy as np
import torch
from torch import nn


def gen(a):
    rng = np.random.default_rng(a.seed)
    with open(f"{a.out_dir}/items.txt", "w") as f:
        f.write("id:int64\tweight:float\tattrs:string\n")
        ids = np.arange(a.items)
        lines = [f"{i}\t1.0\t{i}:{i % 100}\n" for i in ids]
        f.writelines(lines)
    for split, rows in (("train", a.train_rows), ("eval", a.eval_rows)):
        users = rng.integers(0, a.users, rows)
        cates = (users * 7919) % 100
        items = cates + 100 * rng.integers(0, a.items // 100, rows)
        ages = users % 10
        with open(f"{a.out_dir}/{split}.csv", "w") as f:
            f.write("user_id,user_age,item_id,item_cate,clk\n")
            f.writelines(f"{u},{g},{i},{i % 100},1\n" for u, g, i in zip(users, ages, items))


def tower(in_dim):
    return nn.Sequential(nn.Linear(in_dim, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 64))


class DSSM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.ModuleDict({
            "user_id": nn.EmbeddingBag(100000, 32, mode="sum", sparse=True),
            "user_age": nn.EmbeddingBag(10, 8, mode="sum", sparse=True),
            "item_id": nn.EmbeddingBag(1000000, 32, mode="sum", sparse=True),
            "item_cate": nn.EmbeddingBag(100, 8, mode="sum", sparse=True),
        })
        for e in self.emb.values():
            bound = (1.0 / e.num_embeddings) ** 0.5
            nn.init.uniform_(e.weight, -bound, bound)
        self.user_tower = tower(40)
        self.item_tower = tower(40)

    def lookup(self, name, ids):
        return self.emb[name](ids.view(-1, 1))

    def forward(self, user_id, user_age, item_id, item_cate):
        u = self.user_tower(torch.cat([self.lookup("user_id", user_id), self.lookup("user_age", user_age)], 1))
        i = self.item_tower(torch.cat([self.lookup("item_id", item_id), self.lookup("item_cate", item_cate)], 1))
        b = u.shape[0]
        pos = (u * i[:b]).sum(1, keepdim=True)
        neg = u @ i[b:].t()
        return torch.cat([pos, neg], 1), u, i


def load(path):
    data = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64)
    return [torch.from_numpy(np.ascontiguousarray(data[:, c])) for c in range(4)]


def train(a):
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    cols = load(f"{a.data_dir}/train.csv")
    weights = torch.ones(a.items)  # the table's weights (all 1.0 as written by gen)
    item_cate = torch.arange(a.items) % 100  # the table's attrs
    n = cols[0].shape[0] // a.batch_size
    batches = []
    for s in range(n):
        sl = slice(s * a.batch_size, (s + 1) * a.batch_size)
        neg = torch.multinomial(weights, a.num_sample, replacement=True)
        batches.append((cols[0][sl], cols[1][sl], torch.cat([cols[2][sl], neg]), torch.cat([cols[3][sl], item_cate[neg]])))
    model = DSSM()
    sparse = [e.weight for e in model.emb.values()]
    dense = [p for n_, p in model.named_parameters() if not n_.startswith("emb.")]
    sparse_opt = torch.optim.Adagrad(sparse, lr=0.01)
    dense_opt = torch.optim.Adam(dense, lr=0.001)
    target = torch.zeros(a.batch_size, dtype=torch.int64)
    times = []
    steps = min(n, a.warmup_steps + a.steps) if a.steps else n
    for s in range(steps):
        t0 = time.perf_counter()
        sim, _, _ = model(*batches[s % n])
        loss = nn.functional.cross_entropy(sim, target)
        sparse_opt.zero_grad()
        dense_opt.zero_grad()
        loss.backward()
        sparse_opt.step()
        dense_opt.step()
        if s >= a.warmup_steps:
            times.append(time.perf_counter() - t0)
    # recall@10 over [positive | sampled negatives] on the eval rows, as the tzrec model reports it.
    ev = load(f"{a.data_dir}/eval.csv")
    hits = total = 0
    with torch.no_grad():
        for s in range(ev[0].shape[0] // a.batch_size):
            sl = slice(s * a.batch_size, (s + 1) * a.batch_size)
            neg = torch.multinomial(weights, a.num_sample, replacement=True)
            sim, _, _ = model(ev[0][sl], ev[1][sl], torch.cat([ev[2][sl], neg]), torch.cat([ev[3][sl], item_cate[neg]]))
            top = sim.topk(10, dim=1).indices
            hits += int((top == 0).any(1).sum())
            total += sim.shape[0]
    print(json.dumps({"engine": "pytorch", "threads": torch.get_num_threads(), "steps_timed": len(times),
                      "samples_per_sec": a.batch_size * len(times) / sum(times),
                      "median_step_ms": 1000 * float(np.median(times)), "recall@10": hits / total}))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["gen", "train"])
    p.add_argument("--out_dir")
    p.add_argument("--data_dir")
    p.add_argument("--train_rows", type=int, default=200000)
    p.add_argument("--eval_rows", type=int, default=20000)
    p.add_argument("--users", type=int, default=100000)
    p.add_argument("--items", type=int, default=1000000)
    p.add_argument("--batch_size", type=int, default=4096)
    p.add_argument("--num_sample", type=int, default=1024)
    p.add_argument("--warmup_steps", type=int, default=3)
    p.add_argument("--steps", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=2024)
    a = p.parse_args()
    gen(a) if a.mode == "gen" else train(a)


if __name__ == "__main__":
    main()
