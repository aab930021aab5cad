#!/usr/bin/python3
"""Reference numbers for src/nn/wukong_layer_test.cc.

Two stacked WuKong layers written out in plain PyTorch ops from TorchEasyRec's definition
(tzrec/modules/interaction.py: LinearCompressBlock.forward, FactorizationMachineBlock.forward,
WuKongLayer.forward), with every parameter filled by the deterministic pattern() in the order of
the state-dict names listed below; the C++ test fills the module's named_parameters() the same
way. Prints the output and the input's gradient of sum(out * pattern(out.shape, 0.77)) as C++
initializer lists.

Run: /usr/bin/python3 tests/python/wukong_reference.py   (Debian's python3-torch, no pip)
"""

import torch
import torch.nn.functional as F

torch.set_printoptions(precision=9)

B, D, F0 = 2, 3, 4      # batch, embedding dim, input features
LCB, FMB, C = 2, 3, 2   # lcb_feature_num, fmb_feature_num, compressed_feature_num
HIDDEN = [5, 4]         # feature_num_mlp.hidden_units (ReLU)


def pattern(shape, phase):
    """0.5 * sin(0.37 * k + phase) over the row-major index k (float32)."""
    n = 1
    for s in shape:
        n *= s
    return ((torch.arange(n, dtype=torch.float32) * 0.37 + phase).sin() * 0.5).reshape(shape)


def layer_shapes(f_in):
    """(name, shape) in the order of the layer's state dict."""
    shapes = [("lcb.weight", [f_in, LCB]), ("fmb.weight", [f_in, C]),
              ("fmb.norm.weight", [f_in * C]), ("fmb.norm.bias", [f_in * C])]
    n_in = f_in * C
    for i, h in enumerate(HIDDEN):
        shapes += [(f"fmb.mlp.mlp.{i}.perceptron.0.weight", [h, n_in]),
                   (f"fmb.mlp.mlp.{i}.perceptron.0.bias", [h])]
        n_in = h
    shapes += [("fmb.feature_out_liner.weight", [FMB * D, n_in]),
               ("fmb.feature_out_liner.bias", [FMB * D]),
               ("norm.weight", [D]), ("norm.bias", [D])]
    if f_in != LCB + FMB:
        shapes.append(("residual_projection.weight", [f_in, LCB + FMB]))
    return shapes


def make_params():
    names = []
    for layer, f_in in enumerate([F0, LCB + FMB]):
        names += [(f"{layer}.{n}", s) for n, s in layer_shapes(f_in)]
    return {n: pattern(s, 0.1 * (k + 1)) for k, (n, s) in enumerate(names)}


def wukong_layer(x, p, prefix):
    f_in = x.shape[1]
    w = lambda n: p[f"{prefix}.{n}"]
    # LinearCompressBlock: out[b, o, d] = sum_f x[b, f, d] W[f, o]
    lcb = torch.einsum("bfd,fo->bod", x, w("lcb.weight"))
    # FactorizationMachineBlock: X (Xᵀ W), layer-normed, MLP, then the output Linear.
    compressed = torch.einsum("bfd,fc->bdc", x, w("fmb.weight"))
    prod = torch.bmm(x, compressed).reshape(B, f_in * C)
    h = F.layer_norm(prod, [f_in * C], w("fmb.norm.weight"), w("fmb.norm.bias"), 1e-5)
    for i in range(len(HIDDEN)):
        h = torch.relu(h @ w(f"fmb.mlp.mlp.{i}.perceptron.0.weight").t() + w(f"fmb.mlp.mlp.{i}.perceptron.0.bias"))
    fmb = (h @ w("fmb.feature_out_liner.weight").t() + w("fmb.feature_out_liner.bias")).reshape(B, FMB, D)
    if f_in != LCB + FMB:
        residual = torch.einsum("bfd,fo->bod", x, w("residual_projection.weight"))
    else:
        residual = x
    return F.layer_norm(torch.cat([fmb, lcb], 1) + residual, [D], w("norm.weight"), w("norm.bias"), 1e-5)


def cpp(t):
    return "torch::tensor({" + ", ".join(f"{v:.9g}" for v in t.flatten().tolist()) + "}).view({" + \
        ", ".join(str(s) for s in t.shape) + "})"


def main():
    p = make_params()
    x = pattern([B, F0, D], 0.0).requires_grad_(True)
    out = wukong_layer(wukong_layer(x, p, "0"), p, "1")
    (out * pattern(list(out.shape), 0.77)).sum().backward()
    print("// out", list(out.shape))
    print(cpp(out.detach()))
    print("// x.grad")
    print(cpp(x.grad))


if __name__ == "__main__":
    main()
