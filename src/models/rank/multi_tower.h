// MultiTower (tzrec/models/multi_tower.py): one MLP per tower input group → concat → final MLP →
// Linear(num_class).
// Submodules (state-dict prefixes): embedding_group, towers.<group>, final_mlp, output_mlp.
#pragma once

#include "models/model.h"
#include "models/rank/group_towers.h"
#include "nn/mlp.h"

namespace tzrec::models {

class MultiTower : public Model {
 public:
  MultiTower(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
             std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;

 private:
  GroupTowers towers_;
  nn::MLP final_mlp_{nullptr};
  torch::nn::Linear output_mlp_{nullptr};
};

}  // namespace tzrec::models
