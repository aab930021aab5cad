#!/usr/bin/python3
"""Reference numbers for src/nn/{din_encoder,simple_attention,pooling_encoder}_test.cc.

The math of TorchEasyRec's DINEncoder, SimpleAttention and PoolingEncoder
(tzrec/modules/sequence.py), written out here in plain PyTorch ops, with weights and inputs from
the deterministic pattern() that the C++ tests build the same way. Prints C++ initializer lists to
paste into the tests.

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


if __name__ == "__main__":
    din_case()
    din_bn_case()
    simple_attention_case()
    pooling_case()
