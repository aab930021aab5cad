// Activation modules from TorchEasyRec activation strings (tzrec/modules/activation.py).
//
// tzrec resolves `MLP.activation` as a Python class path with optional keyword arguments:
//   "nn.ReLU", "torch.nn.ReLU", "nn.LeakyReLU(negative_slope=0.1)", "nn.PReLU(num_parameters=8)".
// We accept the same strings (syntax: base/activation_string.h) for the torch.nn activation
// classes, with PyTorch's arguments and defaults: ReLU, LeakyReLU, PReLU, RReLU, ELU, CELU, SELU,
// GELU, SiLU, Mish, Sigmoid, Hardsigmoid, Hardswish, LogSigmoid, Tanh, Hardtanh, ReLU6, Threshold,
// Softplus, Softsign, Softshrink, Hardshrink, Tanhshrink, Softmax, LogSoftmax, Softmin (without
// `dim`: PyTorch's implicit dim, 0 for inputs of rank 1 or 3, else 1), Identity; and tzrec's own
// "Dice" (nn/dice.h), whose width and rank are those of the layer it follows. Keyword values are
// Python literals (numbers, True/False, quoted strings). nn.GLU is refused (it halves the width
// of the layer, which no MLP can follow). Anything else throws tzrec::ConfigError naming the
// string.
#pragma once

#include <string>

#include <torch/torch.h>

namespace tzrec::nn {

// Builds the activation module described by `activation` (whitespace around it is ignored).
// Returns an empty AnyModule (is_empty() == true) for an empty string: no activation, as in tzrec.
// Only the returned module's parameters and buffers appear in a state dict (PReLU: "weight"
// [num_parameters]; Dice: "alpha", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked").
// hidden_size and dim are the width and input rank (2: [B, C], 3: [B, T, C]) of the layer the
// activation follows, as tzrec's create_activation(act, hidden_size=..., dim=...) receives them;
// only Dice reads them.
torch::nn::AnyModule create_activation(const std::string& activation, int64_t hidden_size = 0, int64_t dim = 2);

}  // namespace tzrec::nn
