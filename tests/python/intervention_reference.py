#!/usr/bin/python3
"""Reference numbers for src/nn/intervention_test.cc.

TorchEasyRec's Intervention (tzrec/modules/intervention.py, Intervention.forward) with its
RotateLayers wrapped by torch.nn.utils.parametrizations.orthogonal exactly as TorchEasyRec wraps
them, so the orthogonal map is PyTorch's own. The parametrizations' `original` parameters and
`base` buffers are set from the deterministic pattern() (the C++ test sets the same values by
state-dict name), the inputs too. Prints the output, the gradients of
sum(out * pattern(out.shape, 0.9)) with respect to base, source and both `original`s, and the
orthogonal weight at the initial state (original = -I) as C++ initializer lists.

Run: /usr/bin/python3 tests/python/intervention_reference.py   (Debian's python3-torch, no pip)
"""

import torch
from torch import nn

torch.set_printoptions(precision=9)
B, BASE, SOURCE, RANK = 3, 5, 4, 2


def pattern(shape, phase):
    """0.5 * sin(0.37 * k + phase) over the row-major index k (float32)."""
    n = 1
    for s in shape:
        n *= s
    return ((torch.arange(n, dtype=torch.float32) * 0.37 + phase).sin() * 0.5).reshape(shape)


class Rotate(nn.Module):
    def __init__(self, n, k):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n, k))
        nn.init.orthogonal_(self.weight)

    def forward(self, x):
        return torch.matmul(x, self.weight)


def cpp(t):
    return "{" + ", ".join(f"{v:.9g}" for v in t.flatten().tolist()) + "}"


def main():
    torch.manual_seed(0)
    base_rot = torch.nn.utils.parametrizations.orthogonal(Rotate(BASE, RANK))
    source_rot = torch.nn.utils.parametrizations.orthogonal(Rotate(SOURCE, RANK))
    # The trained X: off-diagonal pattern values, diagonal +-1 (as torch keeps it).
    values = {
        "base_rotate_layer.parametrizations.weight.original": (base_rot, [BASE, RANK], 0.3),
        "source_rotate_layer.parametrizations.weight.original": (source_rot, [SOURCE, RANK], 0.6),
    }
    with torch.no_grad():
        for name, (mod, shape, phase) in values.items():
            x = pattern(shape, phase)
            x.diagonal().copy_(torch.tensor([-1.0, 1.0]))
            mod.parametrizations.weight.original.copy_(x)
        base_rot.parametrizations.weight[0].base.copy_(pattern([BASE, BASE], 1.1))
        source_rot.parametrizations.weight[0].base.copy_(pattern([SOURCE, SOURCE], 1.7))
    base = pattern([B, BASE], 0.0).requires_grad_(True)
    source = pattern([B, SOURCE], 2.0).requires_grad_(True)
    # Intervention.forward (dropout in eval: identity).
    rotated_base = base_rot(base)
    rotated_source = source_rot(source.detach())
    out = torch.matmul(rotated_base - rotated_source, base_rot.weight.T) + base
    (out * pattern(list(out.shape), 0.9)).sum().backward()
    print("// out", list(out.shape), cpp(out.detach()))
    print("// base.grad", cpp(base.grad))
    print("// source.grad (detached)", source.grad)
    print("// base original.grad", cpp(base_rot.parametrizations.weight.original.grad))
    print("// source original.grad", cpp(source_rot.parametrizations.weight.original.grad))
    # W at the initial state with an identity base: the first RANK columns of I.
    with torch.no_grad():
        fresh = torch.nn.utils.parametrizations.orthogonal(Rotate(BASE, RANK))
        print("// initial original", cpp(fresh.parametrizations.weight.original))
        q0 = fresh.parametrizations.weight[0].base[:, :RANK]
        print("// initial W equals base[:, :k]:", bool(torch.allclose(fresh.weight, q0, atol=1e-6)))


if __name__ == "__main__":
    main()
