#include "nn/mmoe.h"

#include <fmt/format.h>

#include "base/error.h"
#include "nn/fp16_linear.h"

namespace tzrec::nn {

MMoEImpl::MMoEImpl(int64_t in_features, const MLPOptions& expert_mlp, int64_t num_expert, int64_t num_task,
                   const std::optional<MLPOptions>& gate_mlp, const std::string& config_path) {
  if (num_expert < 1) throw ConfigError(fmt::format("{}.num_expert: must be >= 1, got {}", config_path, num_expert));
  if (num_task < 1) throw ConfigError(fmt::format("{}.task_towers: needs at least one task tower", config_path));
  auto experts = register_module("expert_mlps", torch::nn::ModuleList());
  for (int64_t e = 0; e < num_expert; ++e) {
    experts_.emplace_back(in_features, expert_mlp, config_path + ".expert_mlp");
    experts->push_back(experts_.back());
  }
  output_dim_ = experts_.front()->output_dim();
  int64_t gate_in = in_features;
  if (gate_mlp) {
    auto gates = register_module("gate_mlps", torch::nn::ModuleList());
    for (int64_t t = 0; t < num_task; ++t) {
      gate_mlps_.emplace_back(in_features, *gate_mlp, config_path + ".gate_mlp");
      gates->push_back(gate_mlps_.back());
    }
    gate_in = gate_mlps_.front()->output_dim();
  }
  auto finals = register_module("gate_finals", torch::nn::ModuleList());
  for (int64_t t = 0; t < num_task; ++t) {
    gate_finals_.emplace_back(gate_in, num_expert);
    finals->push_back(gate_finals_.back());
  }
}

std::vector<torch::Tensor> MMoEImpl::forward(const torch::Tensor& x) {
  std::vector<torch::Tensor> expert_outputs;
  expert_outputs.reserve(experts_.size());
  for (auto& expert : experts_) expert_outputs.push_back(expert->forward(x));  // [B, D]
  torch::Tensor experts = torch::stack(expert_outputs, 1);                   // [B, E, D]
  std::vector<torch::Tensor> out;
  out.reserve(gate_finals_.size());
  for (size_t t = 0; t < gate_finals_.size(); ++t) {
    torch::Tensor gate_in = gate_mlps_.empty() ? x : gate_mlps_[t]->forward(x);
    torch::Tensor logits = linear_forward(gate_in, gate_finals_[t]->weight, gate_finals_[t]->bias);  // [B, E]
    torch::Tensor gate = torch::softmax(logits, 1).unsqueeze(1);                                      // [B, 1, E]
    out.push_back(torch::matmul(gate.to(experts.scalar_type()), experts).squeeze(1));                // [B, D]
  }
  return out;
}

}  // namespace tzrec::nn
