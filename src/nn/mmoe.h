// Multi-gate Mixture-of-Experts (tzrec/modules/mmoe.py; docs/tzrec-compatibility.md §4):
// `num_expert` expert MLPs on the same input, and per task a softmax gate over the experts
// (optionally after a gate MLP) that mixes the expert outputs into that task's input.
//
// Module tree (state-dict names): expert_mlps.<e> (MLP), gate_mlps.<t> (MLP, only with a gate
// MLP), gate_finals.<t> (Linear(gate input, num_expert)).
#pragma once

#include <optional>
#include <vector>

#include <torch/torch.h>

#include "nn/mlp.h"

namespace tzrec::nn {

class MMoEImpl : public torch::nn::Module {
 public:
  // config_path names the config message in error messages (e.g. "model_config.mmoe"); throws
  // tzrec::ConfigError for num_expert or num_task < 1 and for bad MLP options.
  MMoEImpl(int64_t in_features, const MLPOptions& expert_mlp, int64_t num_expert, int64_t num_task,
           const std::optional<MLPOptions>& gate_mlp, const std::string& config_path = "MMoE");
  // x: [B, in_features] → num_task tensors [B, output_dim()]:
  //   task t: Σ_e softmax(gate_finals[t](gate_mlps[t](x) or x))_e · expert_mlps[e](x)
  std::vector<torch::Tensor> forward(const torch::Tensor& x);
  int64_t output_dim() const { return output_dim_; }

 private:
  std::vector<MLP> experts_;
  std::vector<MLP> gate_mlps_;  // empty without a gate MLP
  std::vector<torch::nn::Linear> gate_finals_;
  int64_t output_dim_ = 0;
};
TORCH_MODULE(MMoE);

}  // namespace tzrec::nn
