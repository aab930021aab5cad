#!/usr/bin/python3
"""Reference numbers for src/nn/{din_encoder,simple_attention,pooling_encoder,
multi_window_din_encoder,self_attention_encoder}_test.cc.

The math of TorchEasyRec's DINEncoder, SimpleAttention, PoolingEncoder, MultiWindowDINEncoder and
SelfAttentionEncoder (tzrec/modules/sequence.py), written out here in plain PyTorch ops (the
self-attention also through torch.nn.MultiheadAttention, as TorchEasyRec runs it), with weights
and inputs from the deterministic pattern() that the C++ tests build the same way. Prints C++
initializer lists to paste into the tests.

Run: /usr/bin/python3 tests/python/sequence_encoder_reference.py   (Debian's python3-torch, no pip)
"""

import torch
import torch.nn.functional as F

torch.set_printoptions(precision=9)
PADDING_LOGIT = -(2**31) + 1


def pattern(shape, phase):
    """0.5 * sin(0.37 * k + phase) over the row-major index k (float32)."""
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(n, dtype=torch.float32) * 0.37 + phase).sin() * 0.5


def shaped(shape, phase):
    return pattern(shape, phase).reshape(shape)


def padded_sequence(batch, steps, dim, lengths, phase):
    """[B, T, D] pattern, zero at t >= lengths[b]."""
    seq = shaped([batch, steps, dim], phase)
    valid = torch.arange(steps).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    return seq * valid.unsqueeze(2)


def cpp(t):
    """A tensor as a nested C++ initializer list."""
    if t.dim() == 0:
        return repr(float(t))
    return "{" + ", ".join(cpp(x) for x in t) + "}"


def masked_attention(logits, lengths, sequence):
    """logits [B, T], lengths [B], sequence [B, T, D] -> [B, D]."""
    steps = sequence.size(1)
    valid = torch.arange(steps).unsqueeze(0) < lengths.unsqueeze(1)
    scores = torch.where(valid, logits, torch.full_like(logits, PADDING_LOGIT))
    return torch.bmm(F.softmax(scores, dim=-1).unsqueeze(1), sequence).squeeze(1)


def din(query, sequence, lengths, params, layers, max_seq_length=0, bns=None):
    """DINEncoder forward. params: name -> tensor; layers: number of attn_mlp layers (ReLU);
    bns: per layer an nn.BatchNorm1d (use_bn, applied over the channel of [B, C, T]) or None."""
    if max_seq_length > 0:
        lengths = lengths.clamp_max(max_seq_length)
        sequence = sequence[:, :max_seq_length]
    dim = sequence.size(2)
    query = torch.cat([query, query.new_zeros(query.size(0), dim - query.size(1))], dim=1)
    queries = query[:, None, :].expand(-1, sequence.size(1), -1)
    h = torch.cat([queries, sequence, queries - sequence, queries * sequence], dim=2)
    for i in range(layers):
        pre = f"mlp.mlp.{i}.perceptron.0"
        h = h @ params[pre + ".weight"].t()
        if bns is not None:
            h = bns[i](h.transpose(1, 2)).transpose(1, 2)
        else:
            h = h + params[pre + ".bias"]
        h = torch.relu(h)
    logits = (h @ params["linear.weight"].t() + params["linear.bias"]).squeeze(2)
    return masked_attention(logits, lengths, sequence)


def make_params(shapes):
    """Parameters filled with pattern(shape, index) in the module's named_parameters() order."""
    return {name: shaped(shape, i).requires_grad_(True) for i, (name, shape) in enumerate(shapes)}


def din_case():
    # DINEncoder(D=4, Dq=3, attn_mlp {hidden_units [5, 3], ReLU}); B=3, T=4, lengths 4, 2, 0.
    params = make_params([
        ("mlp.mlp.0.perceptron.0.weight", [5, 16]), ("mlp.mlp.0.perceptron.0.bias", [5]),
        ("mlp.mlp.1.perceptron.0.weight", [3, 5]), ("mlp.mlp.1.perceptron.0.bias", [3]),
        ("linear.weight", [1, 3]), ("linear.bias", [1]),
    ])
    query = shaped([3, 3], 0.5).requires_grad_(True)
    sequence = padded_sequence(3, 4, 4, [4, 2, 0], 1.5)
    lengths = torch.tensor([4, 2, 0], dtype=torch.int32)
    out = din(query, sequence, lengths, params, 2)
    print("// DIN, D=4, Dq=3, hidden [5, 3], lengths {4, 2, 0}")
    print("out", cpp(out.detach()))
    out.sum().backward()
    print("d out.sum() / d linear.weight", cpp(params["linear.weight"].grad))
    print("d out.sum() / d query", cpp(query.grad))
    with torch.no_grad():
        print("// same, max_seq_length = 2")
        print("out", cpp(din(query, sequence, lengths, params, 2, max_seq_length=2)))


def din_bn_case():
    # DINEncoder(D=2, Dq=2, attn_mlp {hidden_units [3], use_bn, ReLU}) in training mode;
    # B=2, T=3, lengths 3, 1 (int64).
    params = make_params([
        ("mlp.mlp.0.perceptron.0.weight", [3, 8]),
        ("mlp.mlp.0.perceptron.2.weight", [3]), ("mlp.mlp.0.perceptron.2.bias", [3]),
        ("linear.weight", [1, 3]), ("linear.bias", [1]),
    ])
    bn = torch.nn.BatchNorm1d(3)
    with torch.no_grad():
        bn.weight.copy_(params["mlp.mlp.0.perceptron.2.weight"])
        bn.bias.copy_(params["mlp.mlp.0.perceptron.2.bias"])
    bn.train()
    query = shaped([2, 2], 0.25)
    sequence = padded_sequence(2, 3, 2, [3, 1], 2.0)
    lengths = torch.tensor([3, 1], dtype=torch.int64)
    with torch.no_grad():
        out = din(query, sequence, lengths, params, 1, bns=[bn])
    print("// DIN use_bn training, D=2, hidden [3], lengths {3, 1}")
    print("out", cpp(out))
    print("running_mean", cpp(bn.running_mean))
    print("running_var", cpp(bn.running_var))


def simple_attention_case():
    # SimpleAttention(D=Dq=3); B=3, T=4, lengths 3, 1, 0.
    query = shaped([3, 3], 0.75)
    sequence = padded_sequence(3, 4, 3, [3, 1, 0], 1.25)
    lengths = torch.tensor([3, 1, 0], dtype=torch.int32)
    print("// SimpleAttention, D=3, lengths {3, 1, 0}")
    for max_len in (0, 2):
        seq, lens = sequence, lengths
        if max_len > 0:
            seq, lens = seq[:, :max_len], lens.clamp_max(max_len)
        logits = torch.bmm(seq, query.unsqueeze(2)).squeeze(2)
        print(f"max_seq_length {max_len}:", cpp(masked_attention(logits, lens, seq)))


def pooling_case():
    # PoolingEncoder(D=3); B=3, T=4, lengths 3, 1, 0.
    sequence = padded_sequence(3, 4, 3, [3, 1, 0], 1.25)
    lengths = torch.tensor([3, 1, 0], dtype=torch.int64)
    print("// PoolingEncoder, D=3, lengths {3, 1, 0}")
    for max_len in (0, 2):
        seq, lens = sequence, lengths
        if max_len > 0:
            seq, lens = seq[:, :max_len], lens.clamp_max(max_len)
        total = seq.sum(dim=1)
        print(f"sum, max_seq_length {max_len}:", cpp(total))
        print(f"mean, max_seq_length {max_len}:", cpp(total / lens.clamp_min(1).unsqueeze(1)))


def multi_window_din(query, sequence, lengths, params, layers, windows):
    """MultiWindowDINEncoder forward (attn_mlp of `layers` ReLU layers, no BatchNorm)."""
    batch, steps, dim = sequence.shape
    valid = torch.arange(steps).unsqueeze(0) < lengths.unsqueeze(1)
    query = torch.cat([query, query.new_zeros(batch, dim - query.size(1))], dim=1)
    queries = query[:, None, :].expand(-1, steps, -1)
    h = torch.cat([sequence, queries * sequence, queries], dim=2)
    for i in range(layers):
        pre = f"mlp.mlp.{i}.perceptron.0"
        h = torch.relu(h @ params[pre + ".weight"].t() + params[pre + ".bias"])
    logits = h @ params["linear.weight"].t() + params["linear.bias"]
    weights = F.prelu(logits, params["active.weight"])  # [B, T, 1], no softmax
    weighted = weights * valid.unsqueeze(2) * sequence
    # Time axis padded (or, for T > sum(windows), cut by the negative pad) to sum(windows) steps,
    # then summed per window.
    weighted = F.pad(weighted, (0, 0, 0, sum(windows) - steps))
    window_len = torch.tensor(windows)
    sums = torch.segment_reduce(weighted.transpose(0, 1), reduce="sum", lengths=window_len, axis=0)
    sums = sums.transpose(0, 1)  # [B, L, D]
    starts = torch.cumsum(window_len, 0) - window_len
    counts = torch.minimum(lengths.long().unsqueeze(1) - starts.unsqueeze(0), window_len.unsqueeze(0))
    means = sums / counts.clamp_min(1).unsqueeze(2)
    return torch.cat([means, query.unsqueeze(1)], dim=1).reshape(batch, -1)


MW_DIN_PARAMS = [
    ("mlp.mlp.0.perceptron.0.weight", [5, 12]), ("mlp.mlp.0.perceptron.0.bias", [5]),
    ("mlp.mlp.1.perceptron.0.weight", [3, 5]), ("mlp.mlp.1.perceptron.0.bias", [3]),
    ("linear.weight", [1, 3]), ("linear.bias", [1]), ("active.weight", [1]),
]


def multi_window_din_case():
    # MultiWindowDINEncoder(D=4, Dq=3, attn_mlp {hidden_units [5, 3], ReLU}, windows_len [1, 2, 3]);
    # B=3, T=4 (< 6 = sum of the windows: padded), lengths 4, 2, 0 (int32).
    params = make_params(MW_DIN_PARAMS)
    query = shaped([3, 3], 0.5).requires_grad_(True)
    sequence = padded_sequence(3, 4, 4, [4, 2, 0], 1.5)
    lengths = torch.tensor([4, 2, 0], dtype=torch.int32)
    out = multi_window_din(query, sequence, lengths, params, 2, [1, 2, 3])
    print("// MultiWindowDIN, D=4, Dq=3, hidden [5, 3], windows [1, 2, 3], lengths {4, 2, 0}")
    print("out", cpp(out.detach()))
    (out * shaped(list(out.shape), 0.3)).sum().backward()
    print("d (out * pattern(out, 0.3)).sum() / d linear.weight", cpp(params["linear.weight"].grad))
    print("d ... / d active.weight", cpp(params["active.weight"].grad))
    print("d ... / d query", cpp(query.grad))


def multi_window_din_long_case():
    # Same module; B=3, T=8 (> 6 = sum of the windows: steps 6 and 7 are dropped), lengths 8, 5, 1.
    params = make_params(MW_DIN_PARAMS)
    query = shaped([3, 3], 0.5)
    sequence = padded_sequence(3, 8, 4, [8, 5, 1], 1.5)
    lengths = torch.tensor([8, 5, 1], dtype=torch.int64)
    with torch.no_grad():
        out = multi_window_din(query, sequence, lengths, params, 2, [1, 2, 3])
    print("// MultiWindowDIN, T=8 > 6, lengths {8, 5, 1}")
    print("out", cpp(out))


SA_PARAMS = [
    ("_query.weight", [4, 3]), ("_query.bias", [4]),
    ("_key.weight", [4, 3]), ("_key.bias", [4]),
    ("_value.weight", [4, 3]), ("_value.bias", [4]),
    ("_multihead_attn.in_proj_weight", [12, 4]), ("_multihead_attn.in_proj_bias", [12]),
    ("_multihead_attn.out_proj.weight", [4, 4]), ("_multihead_attn.out_proj.bias", [4]),
]


def self_attention_torch(sequence, lengths, params, num_heads, max_seq_length=0):
    """SelfAttentionEncoder forward as TorchEasyRec runs it: torch.nn.MultiheadAttention (weights
    copied from params, gradients copied back by the caller) with a boolean attn_mask that masks
    query t / key u unless both are below the length."""
    dim = params["_query.weight"].size(0)
    mha = torch.nn.MultiheadAttention(dim, num_heads, batch_first=True)
    with torch.no_grad():
        for name, p in mha.named_parameters():
            p.copy_(params["_multihead_attn." + name])
    if max_seq_length > 0:
        sequence = sequence[:, :max_seq_length]
    batch, steps, _ = sequence.shape
    proj = {n: sequence @ params[f"_{n}.weight"].t() + params[f"_{n}.bias"] for n in ("query", "key", "value")}
    valid = (torch.arange(steps).unsqueeze(0) < lengths.unsqueeze(1)).int()
    mask = ~(valid.unsqueeze(2) * valid.unsqueeze(1)).bool()
    mask = mask.repeat_interleave(num_heads, dim=0)  # [B * H, T, T], index b * H + h
    out, _ = mha(proj["query"], proj["key"], proj["value"], attn_mask=mask)
    out = torch.nan_to_num(out, nan=0.0)
    return out.sum(dim=1) / lengths.clamp_min(1).unsqueeze(1), mha


def self_attention_math(sequence, lengths, params, num_heads, max_seq_length=0):
    """The same forward in plain ops, padded query rows set to 0 directly (no NaN, so finite
    gradients; the C++ encoder computes it this way)."""
    if max_seq_length > 0:
        sequence = sequence[:, :max_seq_length]
    batch, steps, _ = sequence.shape
    dim = params["_query.weight"].size(0)
    head = dim // num_heads
    w = params["_multihead_attn.in_proj_weight"].chunk(3)
    b = params["_multihead_attn.in_proj_bias"].chunk(3)
    heads = []
    for i, n in enumerate(("query", "key", "value")):
        x = sequence @ params[f"_{n}.weight"].t() + params[f"_{n}.bias"]
        x = x @ w[i].t() + b[i]
        heads.append(x.reshape(batch, steps, num_heads, head).transpose(1, 2))  # [B, H, T, h]
    q, k, v = heads
    valid = torch.arange(steps).unsqueeze(0) < lengths.unsqueeze(1)  # [B, T]
    scores = (q / head**0.5) @ k.transpose(2, 3)  # [B, H, T, T]
    key_masked = ~valid & valid.any(dim=1, keepdim=True)
    scores = scores.masked_fill(key_masked[:, None, None, :], float("-inf"))
    out = (F.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(batch, steps, dim)
    out = out @ params["_multihead_attn.out_proj.weight"].t() + params["_multihead_attn.out_proj.bias"]
    out = out.masked_fill(~valid.unsqueeze(2), 0.0)
    return out.sum(dim=1) / lengths.clamp_min(1).unsqueeze(1)


def self_attention_case():
    # SelfAttentionEncoder(D=3, multihead_attn_dim=4, num_heads=2); B=3, T=4, lengths 4, 2, 0 (int64).
    params = make_params(SA_PARAMS)
    sequence = padded_sequence(3, 4, 3, [4, 2, 0], 0.7)
    lengths = torch.tensor([4, 2, 0], dtype=torch.int64)
    print("// SelfAttentionEncoder, D=3, A=4, H=2, lengths {4, 2, 0}")
    for max_len in (0, 2):
        out, mha = self_attention_torch(sequence, lengths, params, 2, max_len)
        math_out = self_attention_math(sequence, lengths, params, 2, max_len)
        assert torch.allclose(out, math_out, atol=1e-6), (out, math_out)
        print(f"max_seq_length {max_len}:", cpp(out.detach()))
    # Gradients with padded rows: torch's MultiheadAttention gives NaN (its masked rows are NaN
    # before nan_to_num); the plain-ops version gives the finite ones the C++ encoder computes.
    out, mha = self_attention_torch(sequence, lengths, params, 2)
    out.sum().backward()
    print("torch MultiheadAttention: out_proj.weight grad finite?", bool(mha.out_proj.weight.grad.isfinite().all()))
    for p in params.values():
        p.grad = None
    self_attention_math(sequence, lengths, params, 2).sum().backward()
    print("d out.sum() / d _value.weight", cpp(params["_value.weight"].grad))
    print("d out.sum() / d _multihead_attn.in_proj_bias", cpp(params["_multihead_attn.in_proj_bias"].grad))


def self_attention_full_case():
    # Same module; B=2, T=3, lengths 3, 3: no padded row, so torch's own gradients are finite.
    params = make_params(SA_PARAMS)
    sequence = shaped([2, 3, 3], 0.7)
    lengths = torch.tensor([3, 3], dtype=torch.int64)
    out, mha = self_attention_torch(sequence, lengths, params, 2)
    (out * shaped([2, 4], 0.9)).sum().backward()
    grads = {"_multihead_attn." + n: p.grad.clone() for n, p in mha.named_parameters()}
    grads["_query.weight"] = params["_query.weight"].grad.clone()
    for p in params.values():
        p.grad = None
    (self_attention_math(sequence, lengths, params, 2) * shaped([2, 4], 0.9)).sum().backward()
    for name, g in grads.items():
        assert torch.allclose(params[name].grad, g, atol=1e-6), name
    print("// SelfAttentionEncoder, D=3, A=4, H=2, lengths {3, 3} (torch.nn.MultiheadAttention)")
    print("out", cpp(out.detach()))
    print("d (out * pattern([2, 4], 0.9)).sum() / d _query.weight", cpp(grads["_query.weight"]))
    print("d ... / d _multihead_attn.out_proj.weight", cpp(grads["_multihead_attn.out_proj.weight"]))


if __name__ == "__main__":
    din_case()
    din_bn_case()
    simple_attention_case()
    pooling_case()
    multi_window_din_case()
    multi_window_din_long_case()
    self_attention_case()
    self_attention_full_case()
