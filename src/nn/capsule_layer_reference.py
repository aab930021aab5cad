#!/usr/bin/env python3
"""Reference values of nn/capsule_layer_test.cc: MIND's dynamic routing as TorchEasyRec's
CapsuleLayer describes it (tzrec/modules/capsule.py), written independently with plain PyTorch.
The routing logits start from torch.randn(B, max_seq_len, max_k) drawn right after
torch.manual_seed(0) (routing_init_method "normal"; the test seeds the same generator of the same
libtorch before its forward), and from zeros. Prints the interests and the capsule mask."""
import torch

torch.set_printoptions(precision=8)


def capsule(x, lengths, w, max_k, max_len, iters, scale, pow_, const_caps, init):
    b, s, _ = x.shape
    x = x[:, :max_len, :]
    if s < max_len:
        x = torch.cat([x, torch.zeros(b, max_len - s, x.shape[2])], 1)
    seq_mask = torch.arange(max_len)[None, :] < lengths[:, None]
    x = x * seq_mask[..., None].float()
    if const_caps:
        n = torch.full((b,), float(max_k))
    else:
        n = torch.clamp(torch.log2(lengths.float()), min=1.0, max=float(max_k))
    caps_mask = torch.arange(max_k)[None, :].float() < n[:, None]
    logits = init(b, max_len, max_k) * 1.5  # routing_logits_stddev 1.5
    thresh = torch.where(caps_mask[:, None, :], torch.tensor(float("inf")), torch.tensor(float("-inf")))
    low = x @ w
    low_n = low / low.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    for it in range(iters):
        logits = torch.minimum(logits, thresh)
        logits = torch.softmax(logits * scale, dim=2) * seq_mask[..., None].float()
        high = torch.einsum("bsh,bsk->bkh", low, logits)
        if it + 1 < iters:
            logits = logits + torch.einsum("bkh,bsh->bsk", high, low_n)
        else:
            norm = high.norm(dim=-1, keepdim=True).clamp_min(1e-7)
            high = (norm**2 / (1 + norm**2)) ** pow_ / norm * high
    return high * caps_mask[..., None].float(), caps_mask


x = (torch.arange(2 * 6 * 3, dtype=torch.float32).reshape(2, 6, 3) % 7 - 3) / 4
w = torch.tensor([[0.5, -0.25], [0.125, 1.0], [-0.75, 0.5]])
lengths = torch.tensor([6, 2])
for name, init in (("normal", torch.randn), ("zeros", torch.zeros)):
    torch.manual_seed(0)
    h, m = capsule(x, lengths, w, max_k=3, max_len=5, iters=3, scale=2.0, pow_=0.5, const_caps=False, init=init)
    print(name)
    print(h)
    print(m)
torch.manual_seed(0)
h, m = capsule(x, lengths, w, max_k=2, max_len=8, iters=1, scale=1.0, pow_=1.0, const_caps=True, init=torch.randn)
print("const_caps_num, one iteration, padded")
print(h)
