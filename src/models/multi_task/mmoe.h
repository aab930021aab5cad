// MMoE (tzrec/models/mmoe.py): the first feature group → nn::MMoE → one nn::TaskTower per
// task_towers entry; predictions per tower with the suffix "_<tower_name>" (model_tasks.h).
// Submodules (state-dict prefixes): embedding_group, mmoe, _task_tower.<i>.
#pragma once

#include <vector>

#include "models/model.h"
#include "nn/mmoe.h"
#include "nn/task_tower.h"

namespace tzrec::models {

class MMoE : public Model {
 public:
  MMoE(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
       std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;

 private:
  std::string group_;  // the first feature group
  nn::MMoE mmoe_{nullptr};
  std::vector<nn::TaskTower> towers_;  // in task order
};

}  // namespace tzrec::models
