#include "nn/personalized_net.h"

#include <fmt/format.h>

#include "base/error.h"
#include "nn/activation.h"
#include "nn/fp16_linear.h"
#include "nn/linear_relu.h"

namespace tzrec::nn {

GateNUImpl::GateNUImpl(int64_t input_dim, int64_t hidden_dim, int64_t output_dim, double gamma)
    : gamma_(gamma), output_dim_(output_dim) {
  TORCH_CHECK(input_dim > 0 && hidden_dim > 0 && output_dim > 0, "GateNU: dims must be > 0, got ", input_dim, ", ",
              hidden_dim, ", ", output_dim);
  first_ = torch::nn::Linear(input_dim, hidden_dim);
  second_ = torch::nn::Linear(hidden_dim, output_dim);
  dense_layers_->push_back(first_);
  dense_layers_->push_back(torch::nn::ReLU());
  dense_layers_->push_back(second_);
  dense_layers_->push_back(torch::nn::Sigmoid());
  register_module("dense_layers", dense_layers_);
}

torch::Tensor GateNUImpl::forward(const torch::Tensor& x) {
  torch::Tensor h = linear_relu_forward(x, first_->weight, first_->bias);                  // [B, hidden]
  return gamma_ * torch::sigmoid(linear_forward(h, second_->weight, second_->bias));  // [B, output]
}

EPNetImpl::EPNetImpl(int64_t main_dim, int64_t domain_dim, int64_t hidden_dim, double gamma) {
  gate_nu_ = register_module("gate_nu", GateNU(domain_dim + main_dim, hidden_dim, main_dim, gamma));
}

torch::Tensor EPNetImpl::forward(const torch::Tensor& main, const torch::Tensor& domain) {
  // The gate reads the main embeddings without sending gradients back through itself
  // (personalized_net.py EPNet.forward detaches them).
  torch::Tensor gate = gate_nu_->forward(torch::cat({domain, main.detach()}, -1));  // [B, M]
  return gate * main;
}

PPNetImpl::PPNetImpl(int64_t main_dim, int64_t uia_dim, int64_t num_task, const PPNetOptions& options,
                     const std::string& config_path)
    : num_task_(num_task), hidden_units_(options.hidden_units) {
  const auto& units = hidden_units_;
  if (units.empty()) {
    throw ConfigError(fmt::format("{}.ppnet_hidden_units: must not be empty (the layers of each task's gated MLP)",
                                  config_path));
  }
  for (size_t i = 0; i < units.size(); ++i) {
    if (units[i] <= 0) {
      throw ConfigError(fmt::format("{}.ppnet_hidden_units[{}]: must be > 0, got {}", config_path, i, units[i]));
    }
  }
  if (num_task < 1) throw ConfigError(fmt::format("{}.task_towers: needs at least one task tower", config_path));
  for (size_t i = 0; i < options.dropout_ratio.size(); ++i) {
    const double p = options.dropout_ratio[i];
    if (!(p >= 0.0 && p <= 1.0)) {
      throw ConfigError(fmt::format("{}.ppnet_dropout_ratio[{}]: must be in [0, 1], got {}", config_path, i, p));
    }
  }
  // tzrec's broadcast: [] → 0 for every layer, [p] → p for every layer, else one per layer.
  std::vector<double> dropout = options.dropout_ratio;
  if (dropout.empty()) {
    dropout.assign(units.size(), 0.0);
  } else if (dropout.size() == 1) {
    dropout.assign(units.size(), dropout[0]);
  } else if (dropout.size() != units.size()) {
    throw ConfigError(fmt::format("{}.ppnet_dropout_ratio: has {} values; give 0, 1 or one per ppnet_hidden_units "
                                  "entry ({})",
                                  config_path, dropout.size(), units.size()));
  }
  if (options.activation.find_first_not_of(" \t\n") == std::string::npos) {
    // tzrec builds no module for an empty string and then calls it in every layer.
    throw ConfigError(fmt::format("{}.ppnet_activation: must name an activation (e.g. \"nn.ReLU\"); PPNet applies "
                                  "one after every layer",
                                  config_path));
  }

  auto linears = register_module("linears", torch::nn::ModuleList());
  auto activations = register_module("activations", torch::nn::ModuleList());
  auto dropouts = register_module("dropout_ratios", torch::nn::ModuleList());
  auto gate_nus = register_module("gate_nus", torch::nn::ModuleList());
  for (int64_t t = 0; t < num_task; ++t) {
    int64_t in = main_dim;
    for (size_t j = 0; j < units.size(); ++j) {
      linears_.emplace_back(in, units[j]);
      linears->push_back(linears_.back());
      try {
        activations_.push_back(create_activation(options.activation, units[j], 2));
      } catch (const ConfigError& e) {
        throw ConfigError(fmt::format("{}.ppnet_activation: {}", config_path, e.what()));
      }
      activations->push_back(activations_.back().ptr());
      dropouts_.emplace_back(dropout[j]);
      dropouts->push_back(dropouts_.back());
      gate_nus_.emplace_back(uia_dim + main_dim, units[j], units[j], options.gamma);
      gate_nus->push_back(gate_nus_.back());
      in = units[j];
    }
  }
}

std::vector<torch::Tensor> PPNetImpl::forward(const torch::Tensor& main, const torch::Tensor& uia) {
  // Every gate reads the same input; main is detached there as in personalized_net.py PPNet.forward.
  torch::Tensor gate_input = torch::cat({uia, main.detach()}, -1);  // [B, U + M]
  const size_t layers = hidden_units_.size();
  std::vector<torch::Tensor> out;
  out.reserve(static_cast<size_t>(num_task_));
  for (int64_t t = 0; t < num_task_; ++t) {
    torch::Tensor h = main;
    for (size_t j = 0; j < layers; ++j) {
      const size_t k = static_cast<size_t>(t) * layers + j;
      h = linear_forward(h, linears_[k]->weight, linears_[k]->bias);  // [B, hidden_units[j]]
      h = activations_[k].forward(h);
      h = h * gate_nus_[k]->forward(gate_input);
      h = dropouts_[k]->forward(h);
    }
    out.push_back(h);
  }
  return out;
}

}  // namespace tzrec::nn
