// Helpers for the nn/ unit tests only (header-only; not used by the library).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "nn/mlp.h"

namespace tzrec::nn::testing {

// The keys of a module's named_parameters() / named_buffers(), in order.
inline std::vector<std::string> names(const torch::OrderedDict<std::string, torch::Tensor>& d) {
  std::vector<std::string> out;
  for (const auto& item : d) out.push_back(item.key());
  return out;
}

// MLP options of plain ReLU layers of these widths.
inline MLPOptions relu_mlp(std::vector<int64_t> units) {
  MLPOptions o;
  o.hidden_units = std::move(units);
  return o;
}

// 0.5 · sin(0.37 k + phase) over the row-major index k: pattern() of
// tests/python/sequence_encoder_reference.py, which computes the sequence encoder tests' expected
// values from the same inputs and weights.
inline torch::Tensor pattern(std::vector<int64_t> shape, double phase) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return torch::arange(n, torch::kFloat).mul(0.37).add(phase).sin().mul(0.5).reshape(shape);
}

}  // namespace tzrec::nn::testing
