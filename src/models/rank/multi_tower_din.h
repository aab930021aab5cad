// MultiTowerDIN (tzrec/models/multi_tower_din.py, docs/tzrec-compatibility.md §4): one MLP per DEEP
// tower group and one DIN attention (nn/din_encoder.h) per SEQUENCE group → concat → final MLP
// (when set) → Linear(num_class).
// Submodules (state-dict prefixes): embedding_group, towers.<group>, din_towers.<i>, final_mlp,
// output_mlp.
#pragma once

#include "models/model.h"
#include "models/rank/group_towers.h"
#include "nn/din_encoder.h"
#include "nn/mlp.h"

namespace tzrec::models {

class MultiTowerDIN : public Model {
 public:
  MultiTowerDIN(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
                std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;

 private:
  GroupTowers towers_;
  std::vector<nn::DINEncoder> din_towers_;
  nn::MLP final_mlp_{nullptr};
  torch::nn::Linear output_mlp_{nullptr};
};

}  // namespace tzrec::models
