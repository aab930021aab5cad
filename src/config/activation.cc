#include "config/activation.h"

#include <set>

#include "base/activation_string.h"
#include "base/error.h"

namespace tzrec::config {

namespace {

// Keyword arguments accepted per implemented activation (as in torch.nn).
const std::map<std::string, std::set<std::string>>& implemented() {
  static const std::map<std::string, std::set<std::string>> kArgs = {
      {"ReLU", {"inplace"}},
      {"LeakyReLU", {"negative_slope", "inplace"}},
      {"Sigmoid", {}},
      {"Tanh", {}},
      {"PReLU", {"num_parameters", "init"}},
      {"ELU", {"alpha", "inplace"}},
      {"GELU", {"approximate"}},
      {"SiLU", {"inplace"}},
      {"Softplus", {"beta", "threshold"}},
      {"Identity", {}},
      {"ReLU6", {"inplace"}},
      {"SELU", {"inplace"}},
      {"Mish", {"inplace"}},
      {"Softsign", {}},
  };
  return kArgs;
}

// Other torch.nn activations: valid, but not implemented here.
const std::set<std::string>& known_unimplemented() {
  static const std::set<std::string> kNames = {
      "CELU", "Softmax", "LogSigmoid", "Hardtanh", "Hardswish", "Hardsigmoid",
      "Tanhshrink", "Softshrink", "Hardshrink", "RReLU", "Threshold", "GLU"};
  return kNames;
}

}  // namespace

ActivationSpec parse_activation(const std::string& text) {
  const ActivationString parsed = parse_activation_string(text);
  ActivationSpec spec;
  if (parsed.name.empty()) return spec;
  if (parsed.name == "Dice") throw NotSupportedError("activation Dice");
  const std::string& name = parsed.name;
  for (const auto& [key, value] : parsed.kwargs) spec.kwargs[key] = unquote(value);

  auto it = implemented().find(name);
  if (it == implemented().end()) {
    if (known_unimplemented().count(name)) throw NotSupportedError("activation nn." + name);
    throw ConfigError("cannot parse activation '" + text + "' (unknown activation nn." + name +
                      "), expected e.g. nn.ReLU or nn.LeakyReLU(negative_slope=0.1)");
  }
  for (const auto& [key, value] : spec.kwargs) {
    if (!it->second.count(key)) {
      throw ConfigError("activation '" + text + "': nn." + name + " has no argument '" + key + "'");
    }
  }
  spec.name = name;
  return spec;
}

}  // namespace tzrec::config
