// Syntax of TorchEasyRec activation strings (MLP.activation): a torch.nn class path with optional
// keyword arguments — "nn.ReLU", "torch.nn.ReLU", "nn.LeakyReLU(negative_slope=0.1)" — or
// tzrec's own "Dice". Shared by config validation (which classes/arguments exist) and nn (which
// builds the module), so both accept exactly the same strings.
#pragma once

#include <map>
#include <string>

namespace tzrec {

struct ActivationString {
  // Class name without the "nn." / "torch.nn." prefix ("ReLU", "Dice"); empty for "" (no activation).
  std::string name;
  // Keyword arguments as written, trimmed; quoted strings keep their quotes ("'tanh'").
  std::map<std::string, std::string> kwargs;
};

// Throws ConfigError ("cannot parse activation '...' (why), expected e.g. nn.ReLU or
// nn.LeakyReLU(negative_slope=0.1)") for text that is not of that form.
ActivationString parse_activation_string(const std::string& text);

// Removes one pair of matching single or double quotes, if present.
std::string unquote(const std::string& value);

}  // namespace tzrec
