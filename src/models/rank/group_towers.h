// One MLP per feature group (MultiTower's and MultiTowerDIN's `towers`), registered on the model
// as "towers.<group>" in config order.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "embedding/embedding_group.h"
#include "nn/mlp.h"
#include "tzrec/protos/tower.pb.h"

namespace tzrec::models {

class GroupTowers {
 public:
  GroupTowers() = default;
  // `path`: "model_config.multi_tower.towers". ConfigError for an unknown or repeated group and a
  // tower without mlp.
  GroupTowers(torch::nn::Module& model, const embedding::EmbeddingGroup& groups,
              const google::protobuf::RepeatedPtrField<protos::Tower>& towers, const std::string& path);

  // Each tower's output [B, H_i], in config order.
  std::vector<torch::Tensor> forward(const std::map<std::string, torch::Tensor>& grouped);
  int64_t output_dim() const { return output_dim_; }  // Σ H_i

 private:
  std::vector<std::pair<std::string, nn::MLP>> mlps_;
  int64_t output_dim_ = 0;
};

}  // namespace tzrec::models
