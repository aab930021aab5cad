// Activation strings of MLP configs: "nn.ReLU", "torch.nn.LeakyReLU(negative_slope=0.1)", ...
#pragma once

#include <map>
#include <string>

namespace tzrec::config {

struct ActivationSpec {
  // Torch class name without module prefix: ReLU, LeakyReLU, Sigmoid, Tanh, PReLU, ELU,
  // GELU, SiLU. Empty means no activation (an empty activation string).
  std::string name;
  // Keyword arguments as written, values unparsed except that string quotes are removed,
  // e.g. {"negative_slope": "0.1"}.
  std::map<std::string, std::string> kwargs;
};

// Parses an activation string. Throws ConfigError for text that is not an activation
// ("cannot parse ...") or has unknown keyword arguments, and NotSupportedError for valid
// torch activations this build does not implement (including tzrec's Dice).
ActivationSpec parse_activation(const std::string& text);

}  // namespace tzrec::config
