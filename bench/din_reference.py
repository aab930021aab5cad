#!/usr/bin/python3
"""Plain-PyTorch MultiTowerDIN for bench/train_speed_reference.py --shape din (shape (c) of
bench/train_speed.sh): the model of examples/multi_tower_din_behaviour.config written eagerly from
TorchEasyRec's math (tzrec/models/multi_tower_din.py, tzrec/modules/sequence.py DINEncoder,
tzrec/modules/mlp.py), on the CSV files of `tzrec gen_data --dataset behaviour`.

  deep  : user_id, item_id, cate_id, brand, one id each -> nn.EmbeddingBag(sum, sparse) of dim 16
          (the DEEP group's tables)                                                [B, 64]
          tower MLP 256-128 (Linear + ReLU)                                        [B, 128]
  din   : query q = the target's item_id, cate_id, brand embeddings (the SEQUENCE group's own
          tables, nn.Embedding(sparse))                                            [B, 48]
          sequence s = the click history's item_id, cate_id, brand embeddings (tables of their
          own), its first 50 items (most recent first) padded with zeros to the batch's longest
          history T                                                                [B, T, 48]
          attn_mlp 256-64 (Linear + ReLU) on cat[q, s, q - s, q * s]               [B, T, 192]
          linear 64 -> 1, padded steps at -2^31 + 1, softmax over t, sum_t w_t s_t [B, 48]
  final : MLP 64 on cat[deep, din]                                                 [B, 176]
          output_mlp Linear(64, 1) -> logits                                       [B]

An empty history is one item of id 0 (the data's default value under feature generation,
fg_mode FG_DAG, bench/README.md). Embedding tables: uniform(+-sqrt(1/rows)) (torchrec's init);
dense layers: PyTorch's default init. Optimizers are set up by train_speed_reference.py (sparse
Adagrad, dense Adam). Nothing here is optimised on purpose: it is the eager model a PyTorch user
writes.
"""

import csv

import numpy as np
import torch
from torch import nn

EMB_DIM = 16
SEQ_LEN = 50  # sequence_length of the sequence feature "click_seq"
# num_buckets in examples/multi_tower_din_behaviour.config
USER_ROWS, ITEM_ROWS, CATE_ROWS, BRAND_ROWS = 100001, 50001, 101, 2001
ITEM_FEATURES = ("item_id", "cate_id", "brand")
ITEM_TABLE_ROWS = (ITEM_ROWS, CATE_ROWS, BRAND_ROWS)


def mlp(in_features, hidden_units):
    layers = []
    for h in hidden_units:
        layers += [nn.Linear(in_features, h), nn.ReLU()]
        in_features = h
    return nn.Sequential(*layers)


def _uniform(module, rows):
    bound = (1.0 / rows) ** 0.5
    nn.init.uniform_(module.weight, -bound, bound)
    return module


class MultiTowerDIN(nn.Module):
    def __init__(self):
        super().__init__()
        self.deep_emb = nn.ModuleList(
            _uniform(nn.EmbeddingBag(n, EMB_DIM, mode="sum", sparse=True), n)
            for n in (USER_ROWS,) + ITEM_TABLE_ROWS)
        self.query_emb = nn.ModuleList(
            _uniform(nn.Embedding(n, EMB_DIM, sparse=True), n) for n in ITEM_TABLE_ROWS)
        self.seq_emb = nn.ModuleList(
            _uniform(nn.Embedding(n, EMB_DIM, sparse=True), n) for n in ITEM_TABLE_ROWS)
        seq_dim = EMB_DIM * len(ITEM_FEATURES)
        self.tower = mlp(EMB_DIM * 4, [256, 128])
        self.attn_mlp = mlp(4 * seq_dim, [256, 64])
        self.attn_linear = nn.Linear(64, 1)
        self.final = mlp(128 + seq_dim, [64])
        self.output = nn.Linear(64, 1)

    def sparse_parameters(self):
        return (list(self.deep_emb.parameters()) + list(self.query_emb.parameters()) +
                list(self.seq_emb.parameters()))

    def din(self, query, sequence, lengths):
        """DINEncoder: query [B, D], sequence [B, T, D], lengths [B] -> [B, D]."""
        steps = sequence.size(1)
        mask = torch.arange(steps).unsqueeze(0) < lengths.unsqueeze(1)           # [B, T]
        queries = query.unsqueeze(1).expand(-1, steps, -1)                       # [B, T, D]
        attn_input = torch.cat([queries, sequence, queries - sequence, queries * sequence], dim=-1)
        attn = self.attn_linear(self.attn_mlp(attn_input)).transpose(1, 2)       # [B, 1, T]
        padding = torch.ones_like(attn) * (-(2**31) + 1)
        scores = torch.softmax(torch.where(mask.unsqueeze(1), attn, padding), dim=-1)
        return torch.matmul(scores, sequence).squeeze(1)                         # [B, D]

    def forward(self, inputs):
        deep_ids, item_ids, seq_ids, lengths = inputs  # [B, 4], [B, 3], [B, T, 3], [B]
        batch = deep_ids.size(0)
        offsets = torch.arange(batch)
        deep = torch.cat([bag(deep_ids[:, j], offsets) for j, bag in enumerate(self.deep_emb)], 1)
        query = torch.cat([emb(item_ids[:, j]) for j, emb in enumerate(self.query_emb)], 1)
        valid = (torch.arange(seq_ids.size(1)).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(2)
        sequence = torch.cat([emb(seq_ids[:, :, j]) for j, emb in enumerate(self.seq_emb)], 2) * valid
        y = torch.cat([self.tower(deep), self.din(query, sequence, lengths)], 1)
        return self.output(self.final(y)).squeeze(1)

    def attention_layers(self):
        """[in, out] of the Linear layers that run once per history step."""
        return [(m.in_features, m.out_features) for m in list(self.attn_mlp) + [self.attn_linear]
                if isinstance(m, nn.Linear)]

    def row_layers(self):
        """[in, out] of the Linear layers that run once per row."""
        return [(m.in_features, m.out_features) for m in list(self.tower) + list(self.final) + [self.output]
                if isinstance(m, nn.Linear)]


def read_csv(path):
    """Returns (labels [N] float32, deep ids [N, 4], item ids [N, 3], history ids [N, 50, 3] (zero
    padded), history lengths [N]) as int64 tensors, from a `gen_data --dataset behaviour` CSV."""
    labels, deep, hist, lens = [], [], [], []
    with open(path, newline="") as f:
        reader = csv.reader(f)
        col = {name: i for i, name in enumerate(next(reader))}
        scalar = [col[c] for c in ("user_id",) + ITEM_FEATURES]
        seq = [col["click_seq__" + c] for c in ITEM_FEATURES]
        for row in reader:
            labels.append(float(row[col["label"]]))
            deep.append([int(row[c]) for c in scalar])
            items = [row[c].split("|")[:SEQ_LEN] if row[c] else ["0"] for c in seq]
            n = len(items[0])
            padded = np.zeros((SEQ_LEN, 3), dtype=np.int64)
            for j, values in enumerate(items):
                padded[:len(values), j] = [int(v) for v in values]
            hist.append(padded)
            lens.append(n)
    deep = torch.tensor(deep, dtype=torch.int64)
    for j, rows in enumerate((USER_ROWS,) + ITEM_TABLE_ROWS):
        bad = (deep[:, j] < 0) | (deep[:, j] >= rows)
        if bad.any():
            raise ValueError(f"{path}: an id of column {j + 1} outside [0, {rows})")
    return (torch.tensor(labels, dtype=torch.float32), deep, deep[:, 1:].clone(),
            torch.from_numpy(np.stack(hist)), torch.tensor(lens, dtype=torch.int64))


def batches(path, batch_size):
    """[((deep ids, item ids, history ids [B, T, 3], lengths), labels)], T = the batch's longest
    history (at most 50)."""
    labels, deep, items, hist, lens = read_csv(path)
    out = []
    for b in range(0, labels.shape[0], batch_size):
        e = min(b + batch_size, labels.shape[0])
        steps = int(lens[b:e].max())
        out.append(((deep[b:e], items[b:e], hist[b:e, :steps].contiguous(), lens[b:e]), labels[b:e]))
    return out
