#!/usr/bin/env python3
"""Reference values of nn/gr/gr_modules_test.cc: the input side of TorchEasyRec's generative models
(ContextualInterleavePreprocessor with a slice content encoder, simple and parameterized
contextualized MLPs, SimpleActionEncoder with a watch-time action, contextual features;
HSTUPositionalEncoder with time encoding; TimestampLayerNormPostprocessor), written independently
from their definitions with plain PyTorch on padded tensors.

Every parameter is set to pattern(shape, 0.1 * i), i its index among the parameter names in
sorted order (the test does the same), and the inputs are fixed below. Prints the preprocessed
sequence (eval: targets not interleaved; train: interleaved) after the positional encoder, and the
postprocessed candidates, with 7 significant digits."""
import math

import torch
import torch.nn.functional as F

torch.set_printoptions(precision=7, sci_mode=False, linewidth=200)


def pattern(shape, phase):
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(n, dtype=torch.float32) * 0.37 + phase).sin().mul(0.5).reshape(shape)


B, DU, DT, D, C, DC = 3, 4, 6, 4, 2, 3
UIH_LEN = [2, 0, 3]
NUM_T = [1, 2, 1]
ACT_W, WT_THR, WT_W, ADIM = [1, 2, 4], [10], [8], 2
K = len(ACT_W) + len(WT_W)
CONTENT_HIDDEN, ACTION_HIDDEN = 6, 5
P, NT_BUCKETS = 16, 8
PERIOD_UNITS, UNITS_PER = [3600, 86400], [24, 7]

names_shapes = {
    "_batched_contextual_linear_bias": (C, 1, D),
    "_batched_contextual_linear_weights": (C, DC, D),
    "_content_embedding_mlp._mlp.0.weight": (CONTENT_HIDDEN, DU),
    "_content_embedding_mlp._mlp.0.bias": (CONTENT_HIDDEN,),
    "_content_embedding_mlp._mlp.1.weight": (CONTENT_HIDDEN,),
    "_content_embedding_mlp._mlp.1.bias": (CONTENT_HIDDEN,),
    "_content_embedding_mlp._mlp.2.weight": (D, CONTENT_HIDDEN),
    "_content_embedding_mlp._mlp.2.bias": (D,),
    "_content_embedding_mlp._mlp.3.weight": (D,),
    "_content_embedding_mlp._mlp.3.bias": (D,),
    "_action_encoder._action_embedding_table": (K, ADIM),
    "_action_encoder._target_action_embedding_table": (1, K * ADIM),
    "_action_embedding_mlp._dense_features_compress.weight": (ACTION_HIDDEN, C * DC),
    "_action_embedding_mlp._dense_features_compress.bias": (ACTION_HIDDEN,),
    "_action_embedding_mlp._attn_raw_weights.0.weight": (K * ADIM * D, ACTION_HIDDEN),
    "_action_embedding_mlp._attn_raw_weights.0.bias": (K * ADIM * D,),
    "_action_embedding_mlp._attn_weights_norm.weight": (K * ADIM, D),
    "_action_embedding_mlp._attn_weights_norm.bias": (K * ADIM, D),
    "_action_embedding_mlp._res_weights.0.weight": (ACTION_HIDDEN, ACTION_HIDDEN),
    "_action_embedding_mlp._res_weights.0.bias": (ACTION_HIDDEN,),
    "_action_embedding_mlp._res_weights.1.weight": (ACTION_HIDDEN,),
    "_action_embedding_mlp._res_weights.1.bias": (ACTION_HIDDEN,),
    "_action_embedding_mlp._res_weights.2.weight": (D, ACTION_HIDDEN),
    "_action_embedding_mlp._res_weights.2.bias": (D,),
    "pos._position_embeddings_weight": (P, D),
    "pos._timestamp_embeddings_weight": (NT_BUCKETS + 1, D),
    "post._time_feature_combiner.weight": (D, D + 2 * len(PERIOD_UNITS)),
    "post._time_feature_combiner.bias": (D,),
    "post._layer_norm.weight": (D,),
    "post._layer_norm.bias": (D,),
}
W = {n: pattern(names_shapes[n], 0.1 * i) for i, n in enumerate(sorted(names_shapes))}

total_uih, total_t = sum(UIH_LEN), sum(NUM_T)
uih = pattern((total_uih, DU), 1.0)
cand = pattern((total_t, DT), 2.0)
actions = torch.tensor([1, 6, 3, 0, 5], dtype=torch.float32)
watch = torch.tensor([12.0, 3.0, 10.0, 9.0, 0.0])
uih_ts = torch.tensor([1000.0, 4600.0, 200.0, 90000.0, 100000.0])
cand_ts = torch.tensor([8200.0, 1000.0, 1300.0, 190000.0])
ctx_in = pattern((B, C * DC), 3.0)


def layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def swish_ln(x, w, b):
    return x * torch.sigmoid(layer_norm(x, w, b))


def rows(lengths):
    out, s = [], 0
    for n in lengths:
        out.append(list(range(s, s + n)))
        s += n
    return out


uih_rows, t_rows = rows(UIH_LEN), rows(NUM_T)


def per_row_concat(left, right):
    parts = []
    for b in range(B):
        parts.append(left[uih_rows[b]])
        parts.append(right[t_rows[b]])
    return torch.cat(parts)


def simple_mlp(x, p):
    h = F.linear(x, W[p + "0.weight"], W[p + "0.bias"])
    h = swish_ln(h, W[p + "1.weight"], W[p + "1.bias"])
    h = F.linear(h, W[p + "2.weight"], W[p + "2.bias"])
    return layer_norm(h, W[p + "3.weight"], W[p + "3.bias"])


def param_mlp(x, lengths, ctx, p):
    s = F.linear(ctx, W[p + "_dense_features_compress.weight"], W[p + "_dense_features_compress.bias"])
    raw = F.linear(s, W[p + "_attn_raw_weights.0.weight"], W[p + "_attn_raw_weights.0.bias"]).reshape(B, -1, D)
    wts = F.layer_norm(raw, raw.shape[1:], W[p + "_attn_weights_norm.weight"], W[p + "_attn_weights_norm.bias"], 1e-5)
    r = F.linear(s, W[p + "_res_weights.0.weight"], W[p + "_res_weights.0.bias"])
    r = swish_ln(r, W[p + "_res_weights.1.weight"], W[p + "_res_weights.1.bias"])
    r = F.linear(r, W[p + "_res_weights.2.weight"], W[p + "_res_weights.2.bias"])
    out, s0 = [], 0
    for b, n in enumerate(lengths):
        out.append(x[s0:s0 + n] @ wts[b] + r[b])
        s0 += n
    return torch.cat(out)


def preprocess(train):
    content = per_row_concat(uih, cand[:, :DU])
    lengths = [UIH_LEN[b] + NUM_T[b] for b in range(B)]
    content = simple_mlp(content, "_content_embedding_mlp._mlp.")
    a = actions.long() | ((watch >= WT_THR[0]).long() * WT_W[0])
    bits = torch.tensor(ACT_W + WT_W)
    on = ((a[:, None] & bits[None, :]) > 0).float()
    act_uih = (on[:, :, None] * W["_action_encoder._action_embedding_table"][None]).reshape(total_uih, -1)
    act_t = W["_action_encoder._target_action_embedding_table"].expand(total_t, -1)
    action = per_row_concat(act_uih, act_t)
    action = param_mlp(action, lengths, ctx_in, "_action_embedding_mlp.")
    ts = per_row_concat(uih_ts, cand_ts)
    # interleave per row: (content, action) pairs; targets keep only content outside training
    emb, tss, new_len, new_nt, s0 = [], [], [], [], 0
    for b in range(B):
        n = lengths[b]
        for i in range(n):
            is_target = i >= UIH_LEN[b]
            emb.append(content[s0 + i]); tss.append(ts[s0 + i])
            if train or not is_target:
                emb.append(action[s0 + i]); tss.append(ts[s0 + i])
        new_len.append(2 * n if train else 2 * UIH_LEN[b] + NUM_T[b])
        new_nt.append(2 * NUM_T[b] if train else NUM_T[b])
        s0 += n
    emb, tss = torch.stack(emb), torch.stack(tss)
    # contextual items in front
    ctx = torch.stack([ctx_in.view(B, C, DC)[:, c] @ W["_batched_contextual_linear_weights"][c]
                       + W["_batched_contextual_linear_bias"][c] for c in range(C)], 1)
    out_e, out_t, s0 = [], [], 0
    for b in range(B):
        out_e += [ctx[b], emb[s0:s0 + new_len[b]]]
        out_t += [torch.zeros(C), tss[s0:s0 + new_len[b]]]
        s0 += new_len[b]
    lengths = [n + C for n in new_len]
    return torch.cat(out_e), torch.cat(out_t), lengths, new_nt


def positional(x, ts, lengths, nts):
    out, s0 = [], 0
    for b, n in enumerate(lengths):
        h = n - nts[b]
        q = ts[s0 + n - 1]
        for t in range(n):
            p = t if t < C else min(h - min(t, h) + C, P - 1)
            gap = torch.clamp(q - ts[s0 + t], min=1e-6) / 60.0
            k = int((torch.sqrt(gap) / 1.0 / NT_BUCKETS).clamp(0, 1) * NT_BUCKETS)
            out.append(x[s0 + t] * math.sqrt(D) + W["pos._position_embeddings_weight"][p]
                       + W["pos._timestamp_embeddings_weight"][k])
        s0 += n
    return torch.stack(out)


def postprocess(x, ts):
    feats = [x]
    for pu, upp in zip(PERIOD_UNITS, UNITS_PER):
        a = torch.remainder(torch.div(ts, float(pu), rounding_mode="floor"), float(upp)) / float(upp) * 2 * 3.14
        feats.append(torch.stack([torch.cos(a), torch.sin(a)], -1))
    y = F.linear(torch.cat(feats, -1), W["post._time_feature_combiner.weight"], W["post._time_feature_combiner.bias"])
    return layer_norm(y, W["post._layer_norm.weight"], W["post._layer_norm.bias"])


def main():
    for mode in ("eval", "train"):
        x, ts, lengths, nts = preprocess(mode == "train")
        x = positional(x, ts, lengths, nts)
        print(f"# {mode}: lengths {lengths} num_targets {nts}")
        print(f"# {mode}: timestamps", ts.tolist())
        print(f"# {mode}: encoded rows [{x.shape[0]}, {D}]")
        print(x)
        # candidates: each row's last items (every other one when interleaved), postprocessed
        idx, s0 = [], 0
        for b, n in enumerate(lengths):
            cand_pos = list(range(s0 + n - nts[b], s0 + n))
            idx += cand_pos[::2] if mode == "train" else cand_pos
            s0 += n
        print(f"# {mode}: postprocessed candidates")
        print(postprocess(x[idx], ts[idx]))


if __name__ == "__main__":
    main()
