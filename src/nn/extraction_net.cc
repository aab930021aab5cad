#include "nn/extraction_net.h"

#include <fmt/format.h>

#include "base/error.h"
#include "nn/fp16_linear.h"

namespace tzrec::nn {
namespace {

// Σ_e softmax(gate(selector))_e · experts[e]: [B, D].
torch::Tensor gate_mix(const torch::nn::Linear& gate, const torch::Tensor& selector,
                       const std::vector<torch::Tensor>& experts) {
  torch::Tensor stacked = torch::stack(experts, 1);  // [B, E, D]
  torch::Tensor weights = torch::softmax(linear_forward(selector, gate->weight, gate->bias), 1).unsqueeze(1);
  return torch::matmul(weights.to(stacked.scalar_type()), stacked).squeeze(1);  // [B, D]
}

}  // namespace

ExtractionNetImpl::ExtractionNetImpl(const std::vector<int64_t>& in_task_dims, int64_t in_shared, int64_t share_num,
                                     int64_t expert_num_per_task, const MLPOptions& share_expert_net,
                                     const MLPOptions& task_expert_net, bool final_network,
                                     const std::string& config_path) {
  if (expert_num_per_task < 1) {
    throw ConfigError(fmt::format("{}.expert_num_per_task: must be >= 1, got {}", config_path, expert_num_per_task));
  }
  if (share_num < 0) throw ConfigError(fmt::format("{}.share_num: must be >= 0, got {}", config_path, share_num));
  if (in_task_dims.empty()) throw ConfigError(config_path + ": needs at least one task tower");
  if (share_expert_net.hidden_units.empty() || task_expert_net.hidden_units.empty() ||
      share_expert_net.hidden_units.back() != task_expert_net.hidden_units.back()) {
    throw ConfigError(fmt::format(
        "{}: share_expert_net and task_expert_net must end in the same width (their outputs are mixed by the gates)",
        config_path));
  }
  output_dim_ = task_expert_net.hidden_units.back();
  auto shared = register_module("_shared_layers", torch::nn::ModuleList());
  for (int64_t s = 0; s < share_num; ++s) {
    shared_experts_.emplace_back(in_shared, share_expert_net, config_path + ".share_expert_net");
    shared->push_back(shared_experts_.back());
  }
  const int64_t num_tasks = static_cast<int64_t>(in_task_dims.size());
  if (!final_network) {
    shared_gate_ = register_module("_shared_gate",
                                   torch::nn::Linear(in_shared, num_tasks * expert_num_per_task + share_num));
  }
  auto task_layers = register_module("_task_layers", torch::nn::ModuleList());
  auto task_gates = register_module("_task_gates", torch::nn::ModuleList());
  for (int64_t in_dim : in_task_dims) {
    torch::nn::ModuleList experts;
    task_experts_.emplace_back();
    for (int64_t e = 0; e < expert_num_per_task; ++e) {
      task_experts_.back().emplace_back(in_dim, task_expert_net, config_path + ".task_expert_net");
      experts->push_back(task_experts_.back().back());
    }
    task_layers->push_back(experts);
    task_gates_.emplace_back(in_dim, expert_num_per_task + share_num);
    task_gates->push_back(task_gates_.back());
  }
}

std::pair<std::vector<torch::Tensor>, torch::Tensor> ExtractionNetImpl::forward(
    const std::vector<torch::Tensor>& task_inputs, const torch::Tensor& shared_input) {
  TORCH_CHECK(task_inputs.size() == task_experts_.size(), "ExtractionNet: ", task_experts_.size(),
              " task inputs expected, got ", task_inputs.size());
  std::vector<torch::Tensor> shared;
  for (auto& expert : shared_experts_) shared.push_back(expert->forward(shared_input));
  std::vector<torch::Tensor> all_task_experts;
  std::vector<torch::Tensor> task_outputs;
  for (size_t t = 0; t < task_experts_.size(); ++t) {
    std::vector<torch::Tensor> experts;
    for (auto& expert : task_experts_[t]) experts.push_back(expert->forward(task_inputs[t]));
    all_task_experts.insert(all_task_experts.end(), experts.begin(), experts.end());
    experts.insert(experts.end(), shared.begin(), shared.end());
    task_outputs.push_back(gate_mix(task_gates_[t], task_inputs[t], experts));
  }
  torch::Tensor shared_output;
  if (shared_gate_) {
    all_task_experts.insert(all_task_experts.end(), shared.begin(), shared.end());
    shared_output = gate_mix(shared_gate_, shared_input, all_task_experts);
  }
  return {task_outputs, shared_output};
}

}  // namespace tzrec::nn
