#!/usr/bin/python3
"""Reference numbers for src/models/multi_task/pepnet_test.cc.

GateNU, EPNet and PPNet as TorchEasyRec defines them (tzrec/modules/personalized_net.py: GateNU
line 20, EPNet line 62, PPNet line 110; Dice of tzrec/modules/activation.py), written out here in
plain PyTorch ops over a dict of named weights, with weights and inputs from the deterministic
pattern() that the C++ test builds the same way (nn/testing.h). For each case it prints the
state-dict names of the module tree, the outputs, and the gradients of
sum_t sum(out_t * pattern(out_t.shape, 2.5 + t)) with respect to the inputs, as C++ initializer
lists to paste into the test.

Run: /usr/bin/python3 tests/python/pepnet_reference.py   (Debian's python3-torch, no pip)
"""

import torch

torch.set_printoptions(precision=9)


def pattern(shape, phase):
    """0.5 * sin(0.37 * k + phase) over the row-major index k (float32)."""
    n = 1
    for s in shape:
        n *= s
    return ((torch.arange(n, dtype=torch.float32) * 0.37 + phase).sin() * 0.5).reshape(shape)


def cpp(t):
    """A tensor as a nested C++ initializer list."""
    if t.dim() == 0:
        return repr(float(t))
    return "{" + ", ".join(cpp(x) for x in t) + "}"


def make_params(shapes):
    """Parameter i (in the module's named_parameters() order) = pattern(its shape, i)."""
    return {name: pattern(shape, i).requires_grad_(True) for i, (name, shape) in enumerate(shapes)}


def linear(x, p, prefix):
    return x @ p[prefix + ".weight"].t() + p[prefix + ".bias"]


def gate_nu(x, p, prefix, gamma):
    """gamma * sigmoid(L2(relu(L1(x)))); L1 = dense_layers.0, L2 = dense_layers.2."""
    h = torch.relu(linear(x, p, prefix + "dense_layers.0"))
    return gamma * torch.sigmoid(linear(h, p, prefix + "dense_layers.2"))


def gate_nu_shapes(prefix, input_dim, hidden_dim, output_dim):
    return [
        (prefix + "dense_layers.0.weight", [hidden_dim, input_dim]),
        (prefix + "dense_layers.0.bias", [hidden_dim]),
        (prefix + "dense_layers.2.weight", [output_dim, hidden_dim]),
        (prefix + "dense_layers.2.bias", [output_dim]),
    ]


def epnet(main, domain, p, gamma):
    """The gate reads cat[domain, main.detach()]; the product scales main."""
    gate = gate_nu(torch.cat([domain, main.detach()], dim=-1), p, "gate_nu.", gamma)
    return gate * main


def dice_train(x, alpha, eps=1e-5):
    """Dice (dim 2) in training: BatchNorm1d(affine=False) with the batch's biased variance."""
    mean = x.mean(dim=0)
    var = x.var(dim=0, unbiased=False)
    p = torch.sigmoid((x - mean) / torch.sqrt(var + eps))
    return alpha * (1 - p) * x + p * x


def ppnet(main, uia, p, num_task, hidden_units, activation, gamma):
    """Per task t, layer j (k = t * L + j): h = act_k(linears.k(h)) * gate_nus.k(cat[uia, main.detach()]).
    Dropout is the identity (eval, or ratio 0)."""
    gate_input = torch.cat([uia, main.detach()], dim=-1)
    layers = len(hidden_units)
    outs = []
    for t in range(num_task):
        h = main
        for j in range(layers):
            k = t * layers + j
            h = linear(h, p, f"linears.{k}")
            if activation == "relu":
                h = torch.relu(h)
            else:
                h = dice_train(h, p[f"activations.{k}.alpha"])
            h = h * gate_nu(gate_input, p, f"gate_nus.{k}.", gamma)
        outs.append(h)
    return outs


def ppnet_shapes(main_dim, uia_dim, num_task, hidden_units, dice):
    """named_parameters() order of TorchEasyRec's PPNet: the lists linears, activations,
    dropout_ratios, gate_nus in registration order."""
    layers = len(hidden_units)
    linears, activations, gates = [], [], []
    for t in range(num_task):
        prev = main_dim
        for j, units in enumerate(hidden_units):
            k = t * layers + j
            linears += [(f"linears.{k}.weight", [units, prev]), (f"linears.{k}.bias", [units])]
            if dice:
                activations.append((f"activations.{k}.alpha", [units]))
            gates += gate_nu_shapes(f"gate_nus.{k}.", uia_dim + main_dim, units, units)
            prev = units
    return linears + activations + gates


def report(name, prefix, shapes, outs, inputs):
    loss = sum((o * pattern(list(o.shape), 2.5 + t)).sum() for t, o in enumerate(outs))
    grads = torch.autograd.grad(loss, [x for _, x in inputs])
    print(f"// ---- {name}")
    print("// parameters: " + ", ".join(f'"{n}"' for n, _ in shapes))
    for t, o in enumerate(outs):
        print(f"const std::vector<std::vector<float>> k{prefix}Out{t} = {cpp(o.detach())};")
    for (label, _), g in zip(inputs, grads):
        print(f"const std::vector<std::vector<float>> k{prefix}Grad{label} = {cpp(g)};")
    print()


def main():
    # GateNU(5, 4, 3, gamma 1.5) on x [3, 5] = pattern(.., 0.5) * 3.
    shapes = gate_nu_shapes("", 5, 4, 3)
    p = make_params(shapes)
    x = (pattern([3, 5], 0.5) * 3).requires_grad_(True)
    report("GateNU", "GateNU", shapes, [gate_nu(x, p, "", 1.5)], [("X", x)])

    # EPNet(main 4, domain 3, hidden 5, gamma 2): main = pattern(.., 0.7) * 3,
    # domain = pattern(.., 1.9) * 3.
    shapes = gate_nu_shapes("gate_nu.", 3 + 4, 5, 4)
    p = make_params(shapes)
    main_emb = (pattern([3, 4], 0.7) * 3).requires_grad_(True)
    domain = (pattern([3, 3], 1.9) * 3).requires_grad_(True)
    report("EPNet", "EPNet", shapes, [epnet(main_emb, domain, p, 2.0)], [("Main", main_emb), ("Domain", domain)])

    # PPNet(main 4, uia 3, 2 tasks, hidden [5, 3], nn.ReLU, gamma 1.7), eval.
    shapes = ppnet_shapes(4, 3, 2, [5, 3], dice=False)
    p = make_params(shapes)
    main_emb = (pattern([3, 4], 0.7) * 3).requires_grad_(True)
    uia = (pattern([3, 3], 2.3) * 3).requires_grad_(True)
    outs = ppnet(main_emb, uia, p, 2, [5, 3], "relu", 1.7)
    report("PPNet relu", "PPNetRelu", shapes, outs, [("Main", main_emb), ("Uia", uia)])

    # PPNet(main 4, uia 3, 1 task, hidden [5, 3], Dice, gamma 2), training (batch statistics),
    # B = 4.
    shapes = ppnet_shapes(4, 3, 1, [5, 3], dice=True)
    p = make_params(shapes)
    main_emb = (pattern([4, 4], 0.7) * 3).requires_grad_(True)
    uia = (pattern([4, 3], 2.3) * 3).requires_grad_(True)
    outs = ppnet(main_emb, uia, p, 1, [5, 3], "dice", 2.0)
    report("PPNet Dice", "PPNetDice", shapes, outs, [("Main", main_emb), ("Uia", uia)])


if __name__ == "__main__":
    main()
