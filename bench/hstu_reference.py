#!/usr/bin/env python3
"""The plain PyTorch side of bench/hstu_speed.sh: TorchEasyRec's STU stack with its PyTorch kernels
(hstu_compute_uqvk, pytorch_hstu_mha, pytorch_hstu_compute_output) in eager mode, on the workload
of bench/hstu_bench.cc (same options, same history lengths). The attention pads every sequence to
max_seq_len like pytorch_hstu_mha (padding by index_copy / unpadding by index_select instead of
fbgemm's jagged_to_padded_dense / dense_to_jagged, which are the same copies).

  /usr/bin/python3 bench/hstu_reference.py [--mode speed|memory_attention|memory_step] [--batch 128]
      [--max_len 512] [--targets 8] [--layers 4] [--heads 2] [--dim 128] [--threads 2] [--steps 3]
      [--warmup 1] [--full] [--seed 2024]

Modes and measurements as in hstu_bench.cc; prints one JSON line.
"""

import argparse
import json
import math
import statistics
import time

import torch
import torch.nn.functional as F


def history_lengths(batch, max_len, seed, full):
    """The 64-bit LCG of hstu_bench.cc."""
    out, state = [], seed
    for _ in range(batch):
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        out.append(max_len if full else 1 + (state >> 33) % max_len)
    return out


def valid_attn_mask(n, seq_lengths, num_targets):
    """_get_valid_attn_mask for causal attention with targets (no window, no contextual rows)."""
    ids = torch.arange(0, n).view(1, n)
    max_ids = seq_lengths.view(-1, 1, 1) - num_targets.view(-1, 1, 1)
    ids = torch.clamp(ids, max=max_ids)
    row_ids = ids.view(-1, n, 1).expand(-1, n, n)
    col_ids = ids.view(-1, 1, n).expand(-1, n, n)
    row_col_dist = row_ids - col_ids
    valid = torch.eye(n, dtype=torch.bool).view(1, n, n)
    return torch.logical_or(valid, row_col_dist > 0)


def padded_hstu_mha(max_seq_len, alpha, q, k, v, offsets, num_targets, rows):
    """pytorch_hstu_mha: pad to [B, H, N, D], silu(alpha q k^T) / N * mask, @ v, unpad."""
    n_tok, h, d = q.shape
    dv = v.shape[2]
    b = offsets.numel() - 1

    def pad(x, width):
        dense = x.new_zeros(b * max_seq_len, h * width).index_copy(0, rows, x.reshape(n_tok, h * width))
        return dense.view(b, max_seq_len, h, width).transpose(1, 2)

    pq, pk, pv = pad(q, d), pad(k, d), pad(v, dv)
    qk = torch.einsum("bhxa,bhya->bhxy", pq, pk) * alpha
    qk = F.silu(qk) / max_seq_len
    mask = valid_attn_mask(max_seq_len, offsets[1:] - offsets[:-1], num_targets)
    qk = qk * mask.unsqueeze(1)
    out = torch.einsum("bhxd,bhdv->bhxv", qk, pv)
    return out.transpose(1, 2).reshape(b * max_seq_len, h * dv).index_select(0, rows).view(n_tok, h, dv)


class STULayer(torch.nn.Module):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.dim, self.heads, self.dropout = dim, heads, dropout
        width = (dim * 2 + dim * 2) * heads
        self._uvqk_weight = torch.nn.Parameter(torch.empty(dim, width))
        torch.nn.init.xavier_uniform_(self._uvqk_weight)
        self._uvqk_beta = torch.nn.Parameter(torch.zeros(width))
        self._input_norm_weight = torch.nn.Parameter(torch.ones(dim))
        self._input_norm_bias = torch.nn.Parameter(torch.zeros(dim))
        self._output_weight = torch.nn.Parameter(torch.empty(dim * heads * 3, dim))
        torch.nn.init.xavier_uniform_(self._output_weight)
        self._output_norm_weight = torch.nn.Parameter(torch.ones(dim * heads))
        self._output_norm_bias = torch.nn.Parameter(torch.zeros(dim * heads))

    def forward(self, x, offsets, max_seq_len, num_targets, rows):
        d, h = self.dim, self.heads
        normed = F.layer_norm(x, (d,), self._input_norm_weight, self._input_norm_bias, 1e-6)
        uvqk = torch.addmm(self._uvqk_beta, normed, self._uvqk_weight)
        u, v, q, k = torch.split(uvqk, [d * h, d * h, d * h, d * h], dim=1)
        u = F.silu(u)
        attn = padded_hstu_mha(
            max_seq_len, 1.0 / math.sqrt(d), q.view(-1, h, d), k.view(-1, h, d), v.view(-1, h, d), offsets,
            num_targets, rows,
        ).view(-1, h * d)
        na = F.layer_norm(attn, (h * d,), self._output_norm_weight, self._output_norm_bias, 1e-6)
        y = torch.cat([u, attn, u * na], dim=1)
        y = F.dropout(y, p=self.dropout, training=self.training)
        return torch.addmm(x, y, self._output_weight)


def status_mib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return float(line.split()[1]) / 1024.0
    return -1.0


def reset_peak_rss():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="speed", choices=["speed", "memory_attention", "memory_step"])
    for name, default in [("batch", 128), ("max_len", 512), ("targets", 8), ("layers", 4), ("heads", 2),
                          ("dim", 128), ("threads", 2), ("steps", 3), ("warmup", 1), ("seed", 2024)]:
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--full", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    lengths = [n + a.targets for n in history_lengths(a.batch, a.max_len, a.seed, a.full)]
    offsets_list = [0]
    for n in lengths:
        offsets_list.append(offsets_list[-1] + n)
    n_tok, max_seq_len = offsets_list[-1], a.max_len + a.targets
    offsets = torch.tensor(offsets_list, dtype=torch.int64)
    num_targets = torch.full((a.batch,), a.targets, dtype=torch.int64)
    rows = torch.tensor([b * max_seq_len + i for b, n in enumerate(lengths) for i in range(n)], dtype=torch.int64)
    alpha = 1.0 / math.sqrt(a.dim)

    def qkv():
        return [torch.randn(n_tok, a.heads, a.dim, requires_grad=True) for _ in range(3)]

    def attention_step(t):
        padded_hstu_mha(max_seq_len, alpha, t[0], t[1], t[2], offsets, num_targets, rows).sum().backward()

    def make_stack():
        stack = torch.nn.ModuleList([STULayer(a.dim, a.heads, 0.3) for _ in range(a.layers)])
        stack.train()
        return stack

    def stack_step(stack, x):
        for p in stack.parameters():
            p.grad = None
        x.grad = None
        h = x
        for layer in stack:
            h = layer(h, offsets, max_seq_len, num_targets, rows)
        h.sum().backward()

    out = {"engine": "python", "mode": a.mode, "batch": a.batch, "tokens": n_tok, "max_seq_len": max_seq_len,
           "threads": a.threads, "full": a.full}
    if a.mode == "memory_attention":
        t = qkv()
        before = status_mib("VmRSS")
        reset_peak_rss()
        attention_step(t)
        out.update(rss_before_mib=round(before, 1), peak_delta_mib=round(status_mib("VmHWM") - before, 1))
    elif a.mode == "memory_step":
        stack = make_stack()
        x = torch.randn(n_tok, a.dim, requires_grad=True)
        before = status_mib("VmRSS")
        reset_peak_rss()
        stack_step(stack, x)
        out.update(rss_before_mib=round(before, 1), peak_delta_mib=round(status_mib("VmHWM") - before, 1))
    else:
        stack = make_stack()
        x = torch.randn(n_tok, a.dim, requires_grad=True)
        step_ms, fwd_ms, fwd_bwd_ms = [], [], []
        for i in range(a.warmup + a.steps):
            t0 = time.perf_counter()
            stack_step(stack, x)
            if i >= a.warmup:
                step_ms.append((time.perf_counter() - t0) * 1e3)
        t = qkv()
        for i in range(a.warmup + a.steps):
            t0 = time.perf_counter()
            with torch.no_grad():
                padded_hstu_mha(max_seq_len, alpha, t[0], t[1], t[2], offsets, num_targets, rows)
            if i >= a.warmup:
                fwd_ms.append((time.perf_counter() - t0) * 1e3)
            for y in t:
                y.grad = None
            t0 = time.perf_counter()
            attention_step(t)
            if i >= a.warmup:
                fwd_bwd_ms.append((time.perf_counter() - t0) * 1e3)
        out.update(step_ms=[round(s, 1) for s in step_ms], step_ms_median=round(statistics.median(step_ms), 1),
                   attn_fwd_ms_median=round(statistics.median(fwd_ms), 1),
                   attn_fwd_bwd_ms_median=round(statistics.median(fwd_bwd_ms), 1), attn_dtype="fp32")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
