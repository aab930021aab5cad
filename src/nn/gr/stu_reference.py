#!/usr/bin/env python3
"""Expected values of src/nn/gr/stu_test.cc (STULayerMatchesThePythonReference).

An independent plain-PyTorch STU layer following the definitions of TorchEasyRec's STULayer
with its PyTorch kernels (hstu_compute_uqvk, pytorch_hstu_mha with its padded layout and mask,
pytorch_hstu_compute_output), computed in float64 on deterministic inputs and weights: the sine
pattern of src/nn/testing.h, 0.5 * sin(0.37 k + phase) over the row-major index k, drawn in
float32 as the C++ test does. Prints, per configuration, the layer output, the gradient of
sum(out * pattern(out, 0.9)) with respect to x, and for every parameter the checksum
sum(grad * pattern(grad, 1.1)).

Run: /usr/bin/python3 src/nn/gr/stu_reference.py
"""

import math

import torch
import torch.nn.functional as F


def pattern(shape, phase):
    n = 1
    for s in shape:
        n *= s
    x = torch.arange(n, dtype=torch.float32) * 0.37 + phase
    return (torch.sin(x) * 0.5).reshape(shape).to(torch.float64)


def pad(x, offsets, n_max):
    """[L, ...] jagged rows -> [B, N, ...], zeros past each length."""
    b = len(offsets) - 1
    out = x.new_zeros((b, n_max) + tuple(x.shape[1:]))
    for i in range(b):
        out[i, : offsets[i + 1] - offsets[i]] = x[offsets[i] : offsets[i + 1]]
    return out


def unpad(dense, offsets):
    return torch.cat([dense[i, : offsets[i + 1] - offsets[i]] for i in range(len(offsets) - 1)], dim=0)


def valid_mask(n_max, lengths, num_targets, max_attn_len, contextual, min_full):
    """The causal valid-attention mask of the HSTU attention, [B, N, N] bool, element by element."""
    b = len(lengths)
    mask = torch.zeros(b, n_max, n_max, dtype=torch.bool)
    for s in range(b):
        max_id = lengths[s]
        if contextual > 0:
            max_id = max_id - contextual + 1
        if num_targets is not None:
            max_id -= num_targets[s]

        def pid(x):
            r = max(x - contextual + 1, 0) if contextual > 0 else x
            return min(r, max_id) if num_targets is not None else r

        for i in range(n_max):
            for j in range(n_max):
                r, c = pid(i), pid(j)
                dist = r - c
                ok = i == j or dist > 0
                if max_attn_len > 0:
                    full_row = min_full > 0 and r >= max_id - min_full
                    ok = ok and (dist <= max_attn_len or full_row)
                if contextual > 0:
                    ok = ok or (r == 0 and c < max_id)
                mask[s, i, j] = ok
    return mask


def sla_mask(n_max, lengths, num_targets, k1, k2, contextual):
    """Semi-Local Attention: history row p sees [0, min(k2', p+1)) and [max(k2', p-k1+1), p+1)
    with k2' = max(k2, contextual); target rows see the history [0, H) only."""
    b = len(lengths)
    k2e = max(k2, contextual)
    mask = torch.zeros(b, n_max, n_max, dtype=torch.bool)
    for s in range(b):
        n = lengths[s]
        t = num_targets[s] if num_targets is not None else 0
        hist = max(n - t, 0)
        for p in range(n):
            if p < hist:
                c0, c1, c2 = min(k2e, p + 1), max(k2e, p - k1 + 1), p + 1
            else:
                c0 = c1 = c2 = hist
            for j in range(n):
                mask[s, p, j] = j < c0 or (c1 <= j < c2)
    return mask


def hstu_attention(q, k, v, offsets, n_max, alpha, scaling, mask):
    pq = pad(q, offsets, n_max).transpose(1, 2)  # [B, H, N, A]
    pk = pad(k, offsets, n_max).transpose(1, 2)
    pv = pad(v, offsets, n_max).transpose(1, 2)
    s = torch.einsum("bhxa,bhya->bhxy", pq, pk) * alpha
    p = F.silu(s) / scaling * mask.unsqueeze(1)
    out = torch.einsum("bhxy,bhyv->bhxv", p, pv).transpose(1, 2)  # [B, N, H, V]
    return unpad(out, offsets)


def stu_layer(cfg, params, x):
    d, h, hid, att = cfg["D"], cfg["H"], cfg["hidden"], cfg["attn"]
    lengths = cfg["lengths"]
    offsets = [0]
    for n in lengths:
        offsets.append(offsets[-1] + n)
    targets = cfg.get("targets")
    normed = F.layer_norm(x, (d,), params["_input_norm_weight"], params["_input_norm_bias"], 1e-6)
    uvqk = normed @ params["_uvqk_weight"] + params["_uvqk_beta"]
    u, v, q, k = torch.split(uvqk, [hid * h, hid * h, att * h, att * h], dim=1)
    u = F.silu(u)
    alpha = cfg.get("alpha") or 1.0 / math.sqrt(att)
    n_max = cfg["max_seq_len"]
    scaling = cfg.get("scaling", -1)
    if scaling == -1:
        scaling = n_max
    if cfg.get("sla_k1", 0) > 0 or cfg.get("sla_k2", 0) > 0:
        mask = sla_mask(n_max, lengths, targets, cfg["sla_k1"], cfg["sla_k2"], cfg.get("contextual", 0))
    else:
        mask = valid_mask(n_max, lengths, targets, cfg.get("max_attn_len", 0), cfg.get("contextual", 0), 0)
    attn = hstu_attention(
        q.reshape(-1, h, att), k.reshape(-1, h, att), v.reshape(-1, h, hid), offsets, n_max, alpha, scaling, mask
    ).reshape(-1, h * hid)
    if cfg.get("group_norm", False):
        na = F.group_norm(
            attn.reshape(-1, h, hid), h, params["_output_norm_weight"], params["_output_norm_bias"], 1e-6
        ).reshape(-1, h * hid)
    else:
        na = F.layer_norm(attn, (h * hid,), params["_output_norm_weight"], params["_output_norm_bias"], 1e-6)
    y = torch.cat([u, attn, u * na], dim=1)
    return x + y @ params["_output_weight"]


def make_params(cfg):
    d, h, hid, att = cfg["D"], cfg["H"], cfg["hidden"], cfg["attn"]
    w = (2 * hid + 2 * att) * h
    norm = h if cfg.get("group_norm", False) else h * hid
    p = {
        "_uvqk_weight": pattern([d, w], 0.1),
        "_uvqk_beta": pattern([w], 0.2) * 0.2,
        "_input_norm_weight": 1 + pattern([d], 0.3) * 0.4,
        "_input_norm_bias": pattern([d], 0.4) * 0.2,
        "_output_weight": pattern([3 * h * hid, d], 0.5),
        "_output_norm_weight": 1 + pattern([norm], 0.6) * 0.4,
        "_output_norm_bias": pattern([norm], 0.7) * 0.2,
    }
    return {k: v.clone().requires_grad_(True) for k, v in p.items()}


CONFIGS = {
    # layer norm, targets, an empty sequence, max_seq_len above the longest (the divisor is 6)
    "A": dict(D=4, H=2, hidden=3, attn=2, lengths=[3, 0, 5], targets=[1, 0, 2], max_seq_len=6),
    # group norm, contextual prefix, attention window, explicit alpha and scaling_seqlen
    "B": dict(D=5, H=2, hidden=3, attn=3, lengths=[4, 1, 6], targets=[1, 1, 2], max_seq_len=6,
              contextual=1, max_attn_len=2, alpha=0.7, scaling=10, group_norm=True),
    # Semi-Local Attention (sla_k1 = 2, sla_k2 = 1)
    "C": dict(D=3, H=1, hidden=2, attn=2, lengths=[6, 2], targets=[1, 0], max_seq_len=6, sla_k1=2, sla_k2=1),
}


def fmt(t):
    return ", ".join(f"{v:.8f}" for v in t.reshape(-1).tolist())


def print_checksums(tensors):
    """One C++ initializer line {"name", checksum} per tensor of `tensors` (name -> tensor), in
    name order: the checksum sum(grad * pattern(grad, 1.1)) of its gradient."""
    for n in sorted(tensors):
        t = tensors[n]
        print(f"  {{\"{n}\", {(t.grad * pattern(list(t.shape), 1.1)).sum().item():.8f}}},")


def main():
    for name, cfg in CONFIGS.items():
        params = make_params(cfg)
        total = sum(cfg["lengths"])
        x = (pattern([total, cfg["D"]], 0.8) * 2).requires_grad_(True)
        out = stu_layer(cfg, params, x)
        (out * pattern(list(out.shape), 0.9)).sum().backward()
        print(f"config {name}")
        print(f"  out:    {{{fmt(out.detach())}}}")
        print(f"  x.grad: {{{fmt(x.grad)}}}")
        for k, v in params.items():
            print(f"  {k}: {(v.grad * pattern(list(v.shape), 1.1)).sum().item():.8f}")


if __name__ == "__main__":
    main()
