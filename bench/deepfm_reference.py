#!/usr/bin/python3
"""Plain-PyTorch DeepFM, the reference that tzrec-cpp's DeepFM is compared with.

Same model, data and hyper-parameters as examples/deepfm_criteo_synth.config, built the way
TorchEasyRec builds it (tzrec/models/deepfm.py, modules/fm.py, modules/mlp.py):

  wide : per cat feature an embedding bag of dim wide_embedding_dim=4 ("<f>_emb_wide")
         y_wide = sum of the 26x4 wide values                                   [B, 1]
  fm   : per cat feature an embedding bag of dim 16 ("<f>_emb", shared with deep)
         y_fm = 0.5 * ((sum_i v_i)^2 - sum_i v_i^2)                             [B, 16]
  deep : concat[int_0..int_12 raw values, 26 x 16 embeddings]                  [B, 429]
         MLP 512-256-128 (Linear + ReLU)                                        [B, 128]
  final: MLP 64 on concat[y_wide, y_fm, y_deep]                                 [B, 145]
         output_mlp Linear(64, 1) -> logits                                     [B]
  loss : BCEWithLogits (mean); eval AUC: sklearn roc_auc_score (exact) as "auc", and the
         200-threshold binned AUC that tzrec reports (torchmetrics) as "auc_binned_200".

Embedding tables are initialised uniform(+-sqrt(1/num_embeddings)) (torchrec's default) and
trained with Adagrad on sparse gradients, lr 0.01, eps 1e-8, initial accumulator 0 (FBGEMM's
EXACT_ADAGRAD: acc += g^2; w -= lr * g / (sqrt(acc) + eps), with duplicate ids in a batch summed
first, which is what coalescing the sparse gradient does). Dense parameters: Adam lr 0.001 with
PyTorch's default init. One epoch over train.csv in file order, batch 2048 (last batch kept).

Run with Debian's python (torch 1.13 + sklearn), never at tzrec run time:
  /usr/bin/python3 bench/deepfm_reference.py --train_path data/criteo_synth/train.csv \
      --eval_path data/criteo_synth/eval.csv
Prints one JSON line: {"auc": ..., "samples_per_sec": ..., ...}.
"""

import argparse
import json
import time

import numpy as np
import torch
from sklearn.metrics import roc_auc_score
from torch import nn

NUM_INT = 13
NUM_CAT = 26
# num_buckets of cat_0..cat_25 in examples/deepfm_criteo_synth.config.
BUCKETS = [1000, 500, 20000, 10000, 200, 50, 8000, 300, 100, 30000, 5000, 40000, 2000,
           150, 15000, 600, 30, 12000, 1500, 25000, 40, 700, 18000, 80, 3000, 9000]
EMB_DIM = 16
WIDE_DIM = 4


def read_csv(path, delimiter=","):
    """Returns (label [N] float32, ints [N, 13] float32, cats [N, 26] int64)."""
    with open(path) as f:
        header = f.readline().rstrip("\n").split(delimiter)
    data = np.loadtxt(path, delimiter=delimiter, skiprows=1, dtype=np.int64, ndmin=2)
    col = {name: i for i, name in enumerate(header)}
    label = data[:, col["label"]].astype(np.float32)
    ints = data[:, [col[f"int_{j}"] for j in range(NUM_INT)]].astype(np.float32)
    cats = data[:, [col[f"cat_{j}"] for j in range(NUM_CAT)]]
    for j, n in enumerate(BUCKETS):
        bad = (cats[:, j] < 0) | (cats[:, j] >= n)
        if bad.any():
            row = int(np.argmax(bad))
            raise ValueError(f"{path}: data row {row + 1}: cat_{j}={cats[row, j]} "
                             f"not in [0, {n})")
    return torch.from_numpy(label), torch.from_numpy(ints), torch.from_numpy(cats)


def mlp(in_features, hidden_units):
    layers = []
    for h in hidden_units:
        layers += [nn.Linear(in_features, h), nn.ReLU()]
        in_features = h
    return nn.Sequential(*layers)


def embedding_bags(dim):
    bags = nn.ModuleList()
    for n in BUCKETS:
        bag = nn.EmbeddingBag(n, dim, mode="sum", sparse=True)
        bound = (1.0 / n) ** 0.5
        nn.init.uniform_(bag.weight, -bound, bound)
        bags.append(bag)
    return bags


class DeepFM(nn.Module):
    def __init__(self):
        super().__init__()
        self.wide = embedding_bags(WIDE_DIM)
        self.emb = embedding_bags(EMB_DIM)
        self.deep_mlp = mlp(NUM_INT + NUM_CAT * EMB_DIM, [512, 256, 128])
        self.final_mlp = mlp(1 + EMB_DIM + 128, [64])
        self.output_mlp = nn.Linear(64, 1)

    def forward(self, ints, cats):
        # cats: [B, 26] int64 -> one id per bag ([B, 1] input, sum pooling).
        wide = torch.cat([bag(cats[:, j:j + 1]) for j, bag in enumerate(self.wide)], dim=1)
        y_wide = wide.sum(dim=1, keepdim=True)                                   # [B, 1]
        embs = torch.stack([bag(cats[:, j:j + 1]) for j, bag in enumerate(self.emb)], dim=1)
        s = embs.sum(dim=1)
        y_fm = 0.5 * (s * s - (embs * embs).sum(dim=1))                          # [B, 16]
        deep_in = torch.cat([ints, embs.flatten(1)], dim=1)                      # [B, 429]
        y_deep = self.deep_mlp(deep_in)                                          # [B, 128]
        y = self.output_mlp(self.final_mlp(torch.cat([y_wide, y_fm, y_deep], dim=1)))
        return y.squeeze(1)                                                      # [B]


def binned_auc(labels, probs, thresholds=200):
    """AUC as tzrec computes it: torchmetrics AUROC(task="binary", thresholds=200), i.e. the ROC
    sampled at `thresholds` evenly spaced thresholds in [0, 1] (pred >= t is positive) and
    integrated with the trapezoid rule."""
    t = torch.linspace(0, 1, thresholds, dtype=torch.float64)
    p = torch.as_tensor(probs, dtype=torch.float64)
    y = torch.as_tensor(labels, dtype=torch.float64)
    above = (p.unsqueeze(0) >= t.unsqueeze(1)).double()   # [T, N]
    tpr = (above * y).sum(1) / y.sum()
    fpr = (above * (1 - y)).sum(1) / (1 - y).sum()
    return float(-torch.trapz(tpr, fpr))  # fpr decreases with the threshold


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--train_path", required=True)
    p.add_argument("--eval_path", required=True)
    p.add_argument("--batch_size", type=int, default=2048)
    p.add_argument("--num_epochs", type=int, default=1)
    p.add_argument("--sparse_lr", type=float, default=0.01)
    p.add_argument("--dense_lr", type=float, default=0.001)
    p.add_argument("--adagrad_eps", type=float, default=1e-8)
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch default)")
    args = p.parse_args()

    torch.manual_seed(args.seed)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    t0 = time.time()
    tr_label, tr_ints, tr_cats = read_csv(args.train_path)
    ev_label, ev_ints, ev_cats = read_csv(args.eval_path)
    load_s = time.time() - t0

    model = DeepFM()
    sparse_params = list(model.wide.parameters()) + list(model.emb.parameters())
    sparse_ids = {id(q) for q in sparse_params}
    dense_params = [q for q in model.parameters() if id(q) not in sparse_ids]
    sparse_opt = torch.optim.Adagrad(sparse_params, lr=args.sparse_lr, eps=args.adagrad_eps,
                                     initial_accumulator_value=0.0)
    dense_opt = torch.optim.Adam(dense_params, lr=args.dense_lr)
    loss_fn = nn.BCEWithLogitsLoss()

    n = tr_label.shape[0]
    steps = 0
    loss_sum = 0.0
    t0 = time.time()
    model.train()
    for _ in range(args.num_epochs):
        for b in range(0, n, args.batch_size):
            e = min(b + args.batch_size, n)
            logits = model(tr_ints[b:e], tr_cats[b:e])
            loss = loss_fn(logits, tr_label[b:e])
            sparse_opt.zero_grad()
            dense_opt.zero_grad()
            loss.backward()
            sparse_opt.step()
            dense_opt.step()
            steps += 1
            loss_sum += loss.item()
    train_s = time.time() - t0

    model.eval()
    probs = []
    with torch.no_grad():
        for b in range(0, ev_label.shape[0], args.batch_size):
            e = min(b + args.batch_size, ev_label.shape[0])
            probs.append(torch.sigmoid(model(ev_ints[b:e], ev_cats[b:e])))
    probs = torch.cat(probs).numpy()
    auc = roc_auc_score(ev_label.numpy(), probs)
    print(json.dumps({
        "auc": round(float(auc), 6),
        "auc_binned_200": round(binned_auc(ev_label.numpy(), probs), 6),
        "samples_per_sec": round(n * args.num_epochs / train_s, 1),
        "train_seconds": round(train_s, 3),
        "load_seconds": round(load_s, 3),
        "steps": steps,
        "mean_train_loss": round(loss_sum / max(steps, 1), 6),
        "train_rows": int(n),
        "eval_rows": int(ev_label.shape[0]),
        "eval_positive_rate": round(float(ev_label.mean()), 6),
        "threads": torch.get_num_threads(),
    }))


if __name__ == "__main__":
    main()
