#!/usr/bin/env python3
"""Expected values of src/models/match/hstu_match_test.cc (MatchesThePythonReference).

An independent plain-PyTorch HSTUMatch following the definitions of TorchEasyRec's HSTUMatch
(tzrec/models/hstu.py), HSTUMatchEncoder, UIHPreprocessor, HSTUPositionalEncoder (time encoding
anchored on the query time), L2NormPostprocessor and MatchModel's sampled similarity, with the STU
layers of src/nn/gr/stu_reference.py (imported), in float64 on the test's batch. Every dense
parameter is pattern(shape, 0.1 * i), i its index among the dense parameter names in sorted
order, and every embedding table pattern(shape, 1 + 0.1 * j), j its index among the table names
in sorted order (the test does the same). Prints the user embeddings, the similarity, the loss,
and for every parameter the checksum sum(grad * pattern(grad, 1.1)).

Run: /usr/bin/python3 src/models/match/hstu_match_reference.py
"""

import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "nn", "gr"))
from stu_reference import fmt, pattern, print_checksums, stu_layer  # noqa: E402

B, DU, C, DC, D, OUT, HID = 3, 6, 2, 3, 4, 3, 5
H, HD, AD, LAYERS, MAX_SEQ_LEN = 2, 3, 2, 2, 10
P, NT = 16, 8
TEMPERATURE = 0.5

U = "user_tower._hstu_encoder."
dense_shapes = {
    U + "_input_preprocessor._batched_contextual_linear_weights": (C, DC, D),
    U + "_input_preprocessor._batched_contextual_linear_bias": (C, 1, D),
    U + "_input_preprocessor._input_projection.weight": (D, DU),
    U + "_input_preprocessor._input_projection.bias": (D,),
    U + "_positional_encoder._position_embeddings_weight": (P, D),
    U + "_positional_encoder._timestamp_embeddings_weight": (NT + 1, D),
    "user_tower.output.weight": (OUT, D),
    "user_tower.output.bias": (OUT,),
    "item_tower.mlp.mlp.0.perceptron.0.weight": (HID, DU),
    "item_tower.mlp.mlp.0.perceptron.0.bias": (HID,),
    "item_tower.output.weight": (OUT, HID),
    "item_tower.output.bias": (OUT,),
}
for layer in range(LAYERS):
    s = f"{U}_stu_module._stu_layers.{layer}."
    w = (2 * HD + 2 * AD) * H
    dense_shapes.update({
        s + "_uvqk_weight": (D, w),
        s + "_uvqk_beta": (w,),
        s + "_input_norm_weight": (D,),
        s + "_input_norm_bias": (D,),
        s + "_output_weight": (3 * H * HD, D),
        s + "_output_norm_weight": (H * HD,),
        s + "_output_norm_bias": (H * HD,),
    })
table_shapes = {"sequence.video_id_emb": (20, DU), "user_id_emb": (10, DC), "user_level_emb": (5, DC)}
W = {n: pattern(list(dense_shapes[n]), 0.1 * i).requires_grad_(True) for i, n in enumerate(sorted(dense_shapes))}
T = {n: pattern(list(table_shapes[n]), 1 + 0.1 * j).requires_grad_(True) for j, n in enumerate(sorted(table_shapes))}

# The batch of the test.
user_id, user_level = [7, 3, 1], [1, 2, 0]
uih_ids, uih_len = [4, 5, 6, 7, 8], [2, 0, 3]
uih_ts = torch.tensor([1000.0, 4600.0, 200.0, 90000.0, 100000.0], dtype=torch.float64)
request_time = torch.tensor([5000.0, 3000.0, 120000.0], dtype=torch.float64)
cand_ids = [10, 11, 12, 13, 14, 15, 16]  # positives 10 | 11 12 | 13, then the negatives 14 15 16
pos_len = [1, 2, 1]


def user_tower():
    video = T["sequence.video_id_emb"]
    ctx_in = torch.cat([T["user_id_emb"][user_id], T["user_level_emb"][user_level]], 1)  # [B, C * DC]
    proj = video[uih_ids] @ W[U + "_input_preprocessor._input_projection.weight"].t() + \
        W[U + "_input_preprocessor._input_projection.bias"]
    cw = W[U + "_input_preprocessor._batched_contextual_linear_weights"]
    cb = W[U + "_input_preprocessor._batched_contextual_linear_bias"]
    ctx = torch.stack([ctx_in[:, c * DC:(c + 1) * DC] @ cw[c] + cb[c, 0] for c in range(C)], 1)  # [B, C, D]
    # Each row: its C contextual items (timestamp 0), then its history.
    rows, stamps, lengths, s0 = [], [], [], 0
    for b in range(B):
        n = uih_len[b]
        rows += [ctx[b], proj[s0:s0 + n]]
        stamps += [torch.zeros(C, dtype=torch.float64), uih_ts[s0:s0 + n]]
        lengths.append(C + n)
        s0 += n
    x, ts = torch.cat(rows), torch.cat(stamps)
    # Positional encoder with time encoding, anchored on the request time (float32 buckets).
    pos_w = W[U + "_positional_encoder._position_embeddings_weight"]
    ts_w = W[U + "_positional_encoder._timestamp_embeddings_weight"]
    out, s0 = [], 0
    for b, n in enumerate(lengths):
        q = request_time[b].float()
        for t in range(n):
            p = t if t < C else min(n - t + C, P - 1)
            gap = torch.clamp(q - ts[s0 + t].float(), min=1e-6) / 60.0
            k = int((torch.sqrt(gap) / NT).clamp(0, 1) * NT)
            out.append(x[s0 + t] * math.sqrt(D) + pos_w[p] + ts_w[k])
        s0 += n
    x = torch.stack(out)
    for layer in range(LAYERS):
        s = f"{U}_stu_module._stu_layers.{layer}."
        params = {k[len(s):]: v for k, v in W.items() if k.startswith(s)}
        cfg = dict(D=D, H=H, hidden=HD, attn=AD, lengths=lengths, targets=[0] * B, max_seq_len=max(lengths),
                   scaling=MAX_SEQ_LEN, contextual=C)
        x = stu_layer(cfg, params, x)
    x = x / torch.linalg.norm(x, ord=2, dim=-1, keepdim=True).clamp(min=1e-6)  # L2NormPostprocessor
    last = torch.stack([x[sum(lengths[:b + 1]) - 1] for b in range(B)])  # every row has items (C > 0)
    user = last @ W["user_tower.output.weight"].t() + W["user_tower.output.bias"]
    return F.normalize(user, p=2.0, dim=-1, eps=1e-6)


def item_tower():
    h = F.relu(T["sequence.video_id_emb"][cand_ids] @ W["item_tower.mlp.mlp.0.perceptron.0.weight"].t()
               + W["item_tower.mlp.mlp.0.perceptron.0.bias"])
    item = h @ W["item_tower.output.weight"].t() + W["item_tower.output.bias"]
    return F.normalize(item, p=2.0, dim=-1, eps=1e-6)


def main():
    user = user_tower()
    item = item_tower()
    q = sum(pos_len)
    query = torch.repeat_interleave(user, torch.tensor(pos_len), dim=0)  # [Q, OUT]
    pos = (query * item[:q]).sum(-1, keepdim=True)
    neg = query @ item[q:].t()
    sim = torch.cat([pos, neg], 1) / TEMPERATURE
    loss = F.cross_entropy(sim, torch.zeros(q, dtype=torch.long))
    loss.backward()
    print(f"user: {{{fmt(user.detach())}}}")
    print(f"similarity: {{{fmt(sim.detach())}}}")
    print(f"loss: {loss.item():.8f}")
    print_checksums(W)
    print_checksums(T)


if __name__ == "__main__":
    main()
