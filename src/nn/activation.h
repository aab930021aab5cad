// Activation modules from TorchEasyRec activation strings (tzrec/modules/activation.py).
//
// tzrec resolves `MLP.activation` as a Python class path with optional keyword arguments:
//   "nn.ReLU", "torch.nn.ReLU", "nn.LeakyReLU(negative_slope=0.1)", "nn.PReLU(num_parameters=8)".
// We accept the same strings (syntax: base/activation_string.h) for this fixed set of torch
// classes: ReLU, LeakyReLU, Sigmoid, Tanh, PReLU, ELU, GELU, SiLU, Softplus, Identity, ReLU6, SELU,
// Mish, Softsign. Keyword values are Python literals (numbers, True/False, quoted strings).
// Anything else throws tzrec::ConfigError naming the string; tzrec's own "Dice" throws
// tzrec::NotSupportedError("activation Dice").
#pragma once

#include <string>

#include <torch/torch.h>

namespace tzrec::nn {

// Builds the activation module described by `activation` (whitespace around it is ignored).
// Returns an empty AnyModule (is_empty() == true) for an empty string: no activation, as in tzrec.
// Only the returned module's parameters (PReLU: "weight" [num_parameters]) appear in a state dict.
torch::nn::AnyModule create_activation(const std::string& activation);

}  // namespace tzrec::nn
