#!/usr/bin/env python3
"""Expected values of src/models/generative/dlrm_hstu_test.cc (MatchesThePythonReference).

An independent plain-PyTorch DlrmHSTU (TorchEasyRec's tzrec/models/dlrm_hstu.py) in training
mode, in float64: the embedding lookups, then the input side of src/nn/gr/gr_modules_reference.py
(ContextualInterleavePreprocessor with a slice content encoder, the parameterized contextualized
action MLP, SimpleActionEncoder with a watch-time action, HSTUPositionalEncoder with time
encoding, TimestampLayerNormPostprocessor; imported, on its inputs), the STU layers of
src/nn/gr/stu_reference.py (imported), each row's candidates, the item embedding MLP (Linear,
SwishLayerNorm, Linear, LayerNorm), FusionMTLTower (user * item, MLP, one Linear split into the
tasks), BCE on bit 1 of the action label and MSE on the watch time.

Every dense parameter is pattern(shape, 0.1 * i), i its index among the dense parameter names in
sorted order, and every embedding table pattern(shape, 1 + 0.1 * j), j its index among the table
names in sorted order (the test does the same). Prints the task outputs, the losses, and for every
parameter the checksum sum(grad * pattern(grad, 1.1)) of the gradient of the summed losses.

Run: /usr/bin/python3 src/models/generative/dlrm_hstu_reference.py [ultra]
With `ultra`, UltraHSTU (tzrec/models/ultra_hstu.py) with two channels over the same history: one
such transducer per channel, their candidate encodings concatenated before the item MLP's output
width and the tower.
"""

import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "nn", "gr"))
import gr_modules_reference as g  # noqa: E402
from stu_reference import fmt, pattern, print_checksums, stu_layer  # noqa: E402

H, HD, AD, LAYERS, MAX_SEQ_LEN, ITEM_HIDDEN, TOWER_HIDDEN = 2, 3, 2, 2, 10, 5, 5
# `ultra` (argument): UltraHSTU with two channels over the same history, each its own transducer
# "_hstu_transducer._transducers.<i>.", their candidate embeddings concatenated.
ULTRA = len(sys.argv) > 1 and sys.argv[1] == "ultra"
CHANNELS = ["_hstu_transducer._transducers.0.", "_hstu_transducer._transducers.1."] if ULTRA else ["_hstu_transducer."]
LOCAL_PREFIX = {"pos.": "_positional_encoder.", "post.": "_output_postprocessor."}


def full_name(t, local):
    for short, long in LOCAL_PREFIX.items():
        if local.startswith(short):
            return t + long + local[len(short):]
    return t + "_input_preprocessor." + local


D = g.D
DU = D * len(CHANNELS)  # the user embedding: the channels' outputs side by side
dense_shapes = {}
for t in CHANNELS:
    dense_shapes.update({full_name(t, n): s for n, s in g.names_shapes.items()})
    for layer in range(LAYERS):
        s = f"{t}_stu_module._stu_layers.{layer}."
        w = (2 * HD + 2 * AD) * H
        dense_shapes.update({
            s + "_uvqk_weight": (D, w), s + "_uvqk_beta": (w,), s + "_input_norm_weight": (D,),
            s + "_input_norm_bias": (D,), s + "_output_weight": (3 * H * HD, D),
            s + "_output_norm_weight": (H * HD,), s + "_output_norm_bias": (H * HD,),
        })
dense_shapes.update({
    "_item_embedding_mlp.0.weight": (ITEM_HIDDEN, g.DT), "_item_embedding_mlp.0.bias": (ITEM_HIDDEN,),
    "_item_embedding_mlp.1.weight": (ITEM_HIDDEN,), "_item_embedding_mlp.1.bias": (ITEM_HIDDEN,),
    "_item_embedding_mlp.2.weight": (DU, ITEM_HIDDEN), "_item_embedding_mlp.2.bias": (DU,),
    "_item_embedding_mlp.3.weight": (DU,), "_item_embedding_mlp.3.bias": (DU,),
    "_multitask_module.tower_mlp.mlp.0.perceptron.0.weight": (TOWER_HIDDEN, DU),
    "_multitask_module.tower_mlp.mlp.0.perceptron.0.bias": (TOWER_HIDDEN,),
    "_multitask_module.linear.weight": (2, TOWER_HIDDEN), "_multitask_module.linear.bias": (2,),
})
table_shapes = {"sequence.cand_video_emb": (20, g.DT), "sequence.uih_video_emb": (20, g.DU),
                "user_id_emb": (10, 3), "user_level_emb": (5, 3)}
W = {n: pattern(list(dense_shapes[n]), 0.1 * i).requires_grad_(True) for i, n in enumerate(sorted(dense_shapes))}
E = {n: pattern(list(table_shapes[n]), 1 + 0.1 * j).requires_grad_(True) for j, n in enumerate(sorted(table_shapes))}

# The test's batch: ids of gr_modules_reference's rows (histories 2, 0, 3; candidates 1, 2, 1).
user_id, user_level = [7, 3, 1], [1, 2, 0]
uih_ids, cand_ids = [4, 5, 6, 7, 8], [10, 11, 12, 13]
click = torch.tensor([1.0, 2.0, 3.0, 0.0], dtype=torch.float64)  # action bitmask labels
watch_time = torch.tensor([30.0, 0.0, 12.0, 5.0], dtype=torch.float64)


def channel(t):
    """One transducer (parameters under `t`): each candidate's encoding [4, D]."""
    g.W = {local: W[full_name(t, local)] for local in g.names_shapes}
    x, ts, lengths, nts = g.preprocess(True)
    x = g.positional(x, ts, lengths, nts)
    for layer in range(LAYERS):
        s = f"{t}_stu_module._stu_layers.{layer}."
        params = {k[len(s):]: v for k, v in W.items() if k.startswith(s)}
        cfg = dict(D=D, H=H, hidden=HD, attn=AD, lengths=lengths, targets=nts, max_seq_len=max(lengths),
                   scaling=MAX_SEQ_LEN, contextual=g.C)
        x = stu_layer(cfg, params, x)
    idx, s0 = [], 0
    for b, n in enumerate(lengths):
        idx += list(range(s0 + n - nts[b], s0 + n))[::2]  # the content item of each (content, action) pair
        s0 += n
    return g.postprocess(x[idx], ts[idx])


def model():
    # The embedding group's outputs feed gr_modules_reference's module-level inputs.
    g.uih = E["sequence.uih_video_emb"][uih_ids]
    g.cand = E["sequence.cand_video_emb"][cand_ids]
    g.ctx_in = torch.cat([E["user_id_emb"][user_id], E["user_level_emb"][user_level]], 1)
    user = torch.cat([channel(t) for t in CHANNELS], -1)
    i = "_item_embedding_mlp."
    h = F.linear(g.cand, W[i + "0.weight"], W[i + "0.bias"])
    h = g.swish_ln(h, W[i + "1.weight"], W[i + "1.bias"])
    h = F.linear(h, W[i + "2.weight"], W[i + "2.bias"])
    item = g.layer_norm(h, W[i + "3.weight"], W[i + "3.bias"])
    m = "_multitask_module."
    f = F.silu(F.linear(user * item, W[m + "tower_mlp.mlp.0.perceptron.0.weight"],
                        W[m + "tower_mlp.mlp.0.perceptron.0.bias"]))
    out = F.linear(f, W[m + "linear.weight"], W[m + "linear.bias"])
    return out[:, 0], out[:, 1]


def main():
    logits, y = model()
    bce = F.binary_cross_entropy_with_logits(logits, (click.long() & 1).double())
    l2 = F.mse_loss(y, watch_time)
    (bce + l2).backward()
    print(f"logits_is_click: {{{fmt(logits.detach())}}}")
    print(f"y_watchtime: {{{fmt(y.detach())}}}")
    print(f"binary_cross_entropy_is_click: {bce.item():.8f}")
    print(f"l2_loss_watchtime: {l2.item():.8f}")
    print_checksums(W)
    print_checksums(E)


if __name__ == "__main__":
    main()
