// Task tower of multi-task models (tzrec/modules/task_tower.py TaskTower;
// docs/tzrec-compatibility.md §4): an optional MLP, then Linear(…, num_class).
//
// Module tree (state-dict names): tower_mlp (MLP, when configured), linear.
#pragma once

#include <optional>
#include <string>

#include <torch/torch.h>

#include "nn/mlp.h"

namespace tzrec::nn {

class TaskTowerImpl : public torch::nn::Module {
 public:
  TaskTowerImpl(int64_t in_features, int64_t num_class, const std::optional<MLPOptions>& mlp,
                const std::string& config_path = "TaskTower");
  // x: [B, in_features] → [B, num_class]
  torch::Tensor forward(const torch::Tensor& x);

 private:
  MLP tower_mlp_{nullptr};
  torch::nn::Linear linear_{nullptr};
};
TORCH_MODULE(TaskTower);

}  // namespace tzrec::nn
