// The fusion multi-task tower of the generative ranking models (TorchEasyRec's FusionMTLTower,
// tzrec/modules/task_tower.py; config FusionMTLTower): per candidate, the user embedding times the
// item embedding, an optional MLP ("tower_mlp", TorchEasyRec's MLP names), then one Linear
// ("linear") whose outputs are split into the tasks' logits in task order.
//   user, item [N, D] → {task name → [N, num_class]}
// Every Linear is xavier-uniform with zero bias (TorchEasyRec applies
// init_linear_xavier_weights_zero_bias to the whole tower).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "nn/mlp.h"

namespace tzrec::nn {

struct FusionTask {
  std::string name;
  int64_t num_class = 1;
};

class FusionMTLTowerImpl : public torch::nn::Module {
 public:
  FusionMTLTowerImpl(int64_t in_features, const std::optional<MLPOptions>& mlp, std::vector<FusionTask> tasks,
                     const std::string& config_path);
  std::map<std::string, torch::Tensor> forward(const torch::Tensor& user, const torch::Tensor& item);

 private:
  std::vector<FusionTask> tasks_;
  MLP tower_mlp_{nullptr};
  torch::nn::Linear linear_{nullptr};
};
TORCH_MODULE(FusionMTLTower);

}  // namespace tzrec::nn
