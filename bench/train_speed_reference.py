#!/usr/bin/python3
"""Plain-PyTorch training-speed reference for bench/train_speed.sh (the peer of
bench/train_speed_bench.cc): same models, optimizers, hyper-parameters, batch size, threads and data,
data already in memory.

Embedding tables: one nn.EmbeddingBag(mode="sum", sparse=True) per feature (nn.Embedding(sparse=True)
for DIN's unpooled sequence lookups), torchrec's init uniform(+-sqrt(1/rows)), trained with torch.optim.Adagrad on sparse gradients (lr 0.01, eps 1e-8,
initial accumulator 0: FBGEMM's EXACT_ADAGRAD); dense part Adam lr 0.001.

Shapes:
  --shape deepfm    the DeepFM of bench/deepfm_reference.py (examples/deepfm_criteo_synth.config)
                    on --train_csv / --eval_csv written by `tzrec gen_data`.
  --shape multihot  26 x EmbeddingBag(table_rows, 64) -> concat [B, 1664] -> tower MLP [128] ->
                    final MLP [64] -> Linear(64, 1) (bench/configs/multitower_multihot.config) on
                    the files of `tzrec_train_speed_bench gen_multihot` in --data_dir.
  --shape din       the MultiTowerDIN of bench/din_reference.py
                    (examples/multi_tower_din_behaviour.config) on --train_csv / --eval_csv written
                    by `tzrec gen_data --dataset behaviour` (pass that config's --sparse_lr 0.5
                    --dense_lr 0.002).

Trains --warmup_steps untimed steps, then --steps timed ones (0: the rest of one epoch; more than
there are batches: cycles), evaluates AUC (sklearn, exact) on the held-out rows and measures the
torch.mm rate at the model's Linear shapes. Prints one JSON line.

  /usr/bin/python3 bench/train_speed_reference.py --shape deepfm --train_csv T --eval_csv E --threads 2
"""

import argparse
import json
import os
import resource
import sys
import time

import numpy as np
import torch
from sklearn.metrics import roc_auc_score
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deepfm_reference  # noqa: E402  (DeepFM model and CSV reader)
import din_reference  # noqa: E402  (MultiTowerDIN model and behaviour CSV reader)


def mlp(in_features, hidden_units):
    return deepfm_reference.mlp(in_features, hidden_units)


class MultiHotTower(nn.Module):
    """MultiTower with one tower over `features` multi-hot bags of dim `dim`."""

    def __init__(self, features, rows, dim):
        super().__init__()
        bound = (1.0 / rows) ** 0.5
        # _weight skips EmbeddingBag's own normal_ init of the (large) table.
        self.emb = nn.ModuleList(
            nn.EmbeddingBag(rows, dim, mode="sum", sparse=True,
                            _weight=torch.empty(rows, dim).uniform_(-bound, bound))
            for _ in range(features))
        self.tower = mlp(features * dim, [128])
        self.final = mlp(128, [64])
        self.output = nn.Linear(64, 1)

    def forward(self, bags):
        # bags: per feature (values [N_f] int64, offsets [B] int64).
        x = torch.cat([bag(v, o) for bag, (v, o) in zip(self.emb, bags)], dim=1)  # [B, F * dim]
        return self.output(self.final(self.tower(x))).squeeze(1)                 # [B]


def multihot_batches(data_dir, split, features, batch_size):
    """[(bags, labels)] from gen_multihot files: bags per feature (values, offsets)."""
    lengths = np.fromfile(os.path.join(data_dir, split + ".lengths"), dtype=np.int32)
    values = np.fromfile(os.path.join(data_dir, split + ".values"), dtype=np.int64)
    labels = np.fromfile(os.path.join(data_dir, split + ".labels"), dtype=np.float32)
    rows = labels.shape[0]
    if lengths.shape[0] != rows * features:
        raise ValueError(f"{data_dir}/{split}.lengths: {lengths.shape[0]} entries, expected "
                         f"{rows} rows x {features} features")
    lengths = lengths.reshape(rows, features).astype(np.int64)
    start = np.concatenate([[0], np.cumsum(lengths.ravel())])
    if start[-1] != values.shape[0]:
        raise ValueError(f"{data_dir}/{split}.values: {values.shape[0]} ids, lengths sum to {start[-1]}")
    out = []
    for b in range(0, rows, batch_size):
        e = min(b + batch_size, rows)
        lens = lengths[b:e]                                    # [n, F]
        vals = values[start[b * features]:start[e * features]]  # (row, feature) order
        feature_of = np.repeat(np.tile(np.arange(features), e - b), lens.ravel())
        order = np.argsort(feature_of, kind="stable")          # feature-major, rows in order
        per_feature = np.split(vals[order], np.cumsum(lens.sum(axis=0))[:-1])
        bags = []
        for f in range(features):
            offsets = np.concatenate([[0], np.cumsum(lens[:, f])[:-1]])
            bags.append((torch.from_numpy(np.ascontiguousarray(per_feature[f])),
                         torch.from_numpy(offsets.astype(np.int64))))
        out.append((bags, torch.from_numpy(labels[b:e].copy())))
    return out


def deepfm_batches(path, batch_size):
    label, ints, cats = deepfm_reference.read_csv(path)
    return [((ints[b:b + batch_size], cats[b:b + batch_size]), label[b:b + batch_size])
            for b in range(0, label.shape[0], batch_size)]


def linear_shapes(model):
    return [(m.in_features, m.out_features) for m in model.modules() if isinstance(m, nn.Linear)]


def gemm_flops_per_sec(layers, batch, repeats=5):
    """torch.mm rate for the forward and two backward GEMMs of every Linear layer (best pass).
    layers: (in, out) run on `batch` rows, or (in, out, rows) on `rows` rows."""
    layers = [(l[0], l[1], l[2] if len(l) > 2 else batch) for l in layers]
    ops = [(torch.randn(m, i), torch.randn(o, i), torch.randn(m, o)) for i, o, m in layers]
    flops = sum(3 * 2 * m * i * o for i, o, m in layers)
    best = float("inf")
    for r in range(repeats + 1):
        t0 = time.perf_counter()
        for x, w, g in ops:
            torch.mm(x, w.t())
            torch.mm(g, w)
            torch.mm(g.t(), x)
        if r > 0:
            best = min(best, time.perf_counter() - t0)
    return flops / best


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shape", choices=["deepfm", "multihot", "din"], required=True)
    p.add_argument("--train_csv")
    p.add_argument("--eval_csv")
    p.add_argument("--data_dir")
    p.add_argument("--table_rows", type=int, default=0, help="multihot: rows per table (0: meta.json)")
    p.add_argument("--batch_size", type=int, default=4096)
    p.add_argument("--warmup_steps", type=int, default=3)
    p.add_argument("--steps", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--sparse_lr", type=float, default=0.01)
    p.add_argument("--dense_lr", type=float, default=0.001)
    p.add_argument("--seed", type=int, default=2024)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    if args.shape == "deepfm":
        if not args.train_csv or not args.eval_csv:
            p.error("--shape deepfm needs --train_csv and --eval_csv")
        train = deepfm_batches(args.train_csv, args.batch_size)
        evals = deepfm_batches(args.eval_csv, args.batch_size)
    elif args.shape == "din":
        if not args.train_csv or not args.eval_csv:
            p.error("--shape din needs --train_csv and --eval_csv")
        train = din_reference.batches(args.train_csv, args.batch_size)
        evals = din_reference.batches(args.eval_csv, args.batch_size)
    else:
        if not args.data_dir:
            p.error("--shape multihot needs --data_dir")
        with open(os.path.join(args.data_dir, "meta.json")) as f:
            meta = json.load(f)
        features = meta["features"]
        train = multihot_batches(args.data_dir, "train", features, args.batch_size)
        evals = multihot_batches(args.data_dir, "eval", features, args.batch_size)
    load_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    if args.shape == "deepfm":
        model = deepfm_reference.DeepFM()
        sparse_params = list(model.wide.parameters()) + list(model.emb.parameters())
        forward = lambda inputs: model(*inputs)  # noqa: E731
    elif args.shape == "din":
        model = din_reference.MultiTowerDIN()
        sparse_params = model.sparse_parameters()
        forward = model
    else:
        model = MultiHotTower(features, args.table_rows or meta["table_rows"], 64)
        sparse_params = list(model.emb.parameters())
        forward = model
    sparse_ids = {id(q) for q in sparse_params}
    dense_params = [q for q in model.parameters() if id(q) not in sparse_ids]
    sparse_opt = torch.optim.Adagrad(sparse_params, lr=args.sparse_lr, eps=1e-8,
                                     initial_accumulator_value=0.0)
    dense_opt = torch.optim.Adam(dense_params, lr=args.dense_lr)
    loss_fn = nn.BCEWithLogitsLoss()
    init_s = time.perf_counter() - t0

    if len(train) <= args.warmup_steps:
        p.error(f"{len(train)} training batches, need more than --warmup_steps {args.warmup_steps}")
    timed_steps = args.steps if args.steps > 0 else len(train) - args.warmup_steps
    split = {"forward_loss": 0.0, "backward": 0.0, "sparse_step": 0.0, "dense_step": 0.0}
    timed_s = 0.0
    step_times = []
    timed_samples = 0
    loss_sum = 0.0
    model.train()
    for step in range(args.warmup_steps + timed_steps):
        inputs, labels = train[step % len(train)]
        t_start = time.perf_counter()
        loss = loss_fn(forward(inputs), labels)
        t_fwd = time.perf_counter()
        sparse_opt.zero_grad()
        dense_opt.zero_grad()
        loss.backward()
        t_bwd = time.perf_counter()
        sparse_opt.step()
        t_sparse = time.perf_counter()
        dense_opt.step()
        t_end = time.perf_counter()
        if step >= args.warmup_steps:
            timed_s += t_end - t_start
            step_times.append(t_end - t_start)
            timed_samples += labels.shape[0]
            split["forward_loss"] += t_fwd - t_start
            split["backward"] += t_bwd - t_fwd
            split["sparse_step"] += t_sparse - t_bwd
            split["dense_step"] += t_end - t_sparse
            loss_sum += loss.item()

    t0 = time.perf_counter()
    model.eval()
    probs, labels = [], []
    with torch.no_grad():
        for inputs, y in evals:
            probs.append(torch.sigmoid(forward(inputs)))
            labels.append(y)
    probs = torch.cat(probs).numpy()
    labels = torch.cat(labels).numpy()
    auc = float(roc_auc_score(labels, probs)) if 0 < labels.sum() < labels.shape[0] else float("nan")
    eval_s = time.perf_counter() - t0

    # Peak RSS of training and evaluation, before the GEMM rate measurement allocates its operands.
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if args.shape == "din":
        # The attention MLP runs on every padded step: B x T rows (T = the batch's longest
        # history), the other layers on B rows. Per sample: mean T over the timed steps.
        timed = range(args.warmup_steps, args.warmup_steps + timed_steps)
        mean_steps = float(np.mean([train[s % len(train)][0][2].size(1) for s in timed]))
        layers = ([(i, o, round(args.batch_size * mean_steps)) for i, o in model.attention_layers()] +
                  [(i, o, args.batch_size) for i, o in model.row_layers()])
        mlp_flops = 3 * 2 * sum(i * o * m for i, o, m in layers) / args.batch_size
    else:
        mean_steps = None
        layers = linear_shapes(model)
        mlp_flops = 3 * 2 * sum(i * o for i, o in layers)
    gemm = gemm_flops_per_sec(layers, args.batch_size)
    sps = timed_samples / timed_s
    print(json.dumps({
        "engine": "pytorch",
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "batch_size": args.batch_size,
        "warmup_steps": args.warmup_steps,
        "steps_timed": timed_steps,
        "samples_timed": timed_samples,
        "samples_per_sec": sps,
        "step_ms": 1000 * timed_s / timed_steps,
        "median_step_ms": 1000 * float(np.median(step_times)),
        "split_ms": {k: 1000 * v / timed_steps for k, v in split.items()},
        "mean_train_loss": loss_sum / timed_steps,
        "auc": auc,
        "eval_rows": int(labels.shape[0]),
        "eval_seconds": eval_s,
        "load_seconds": load_s,
        "init_seconds": init_s,
        "peak_rss_bytes": peak_rss,
        "mlp_layers": layers,
        "mean_steps": mean_steps,
        "mlp_flops_per_sample": mlp_flops,
        "gemm_flops_per_sec": gemm,
        "roofline_pct": 100 * mlp_flops * sps / gemm,
    }))


if __name__ == "__main__":
    main()
