// DBMTL, Deep Bayesian Multi-Target Learning (tzrec/models/dbmtl.py): the first feature group →
// optional mask_net (MaskNetModule, nn/mask_net.h) → optional bottom_mlp → optional MMoE (when expert_mlp is set) → per task tower an optional MLP;
// a tower with relation_mlp concatenates its output with the outputs of its relation_tower_names
// (earlier towers, after their own relation MLPs) and runs relation_mlp over that (the Bayesian
// dependency, e.g. cvr on ctr); then Linear(…, num_class) per tower. Predictions, losses and
// metrics per tower with the suffix "_<tower_name>" (model_tasks.h).
// Submodules (state-dict prefixes): embedding_group, mask_net, bottom_mlp, mmoe, task_mlps.<tower>,
// relation_mlps.<tower>, task_outputs.<i>.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "models/model.h"
#include "nn/mask_net.h"
#include "nn/mlp.h"
#include "nn/mmoe.h"

namespace tzrec::models {

class DBMTL : public Model {
 public:
  DBMTL(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
        std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;

 private:
  struct Tower {
    std::string name;
    nn::MLP mlp{nullptr};           // task_mlps.<name>, optional
    nn::MLP relation_mlp{nullptr};  // relation_mlps.<name>, optional
    std::vector<size_t> relations;  // indices of the earlier towers it reads (with relation_mlp)
    torch::nn::Linear output{nullptr};
  };
  std::string group_;  // the first feature group
  nn::MaskNetModule mask_net_{nullptr};
  nn::MLP bottom_mlp_{nullptr};
  nn::MMoE mmoe_{nullptr};
  std::vector<Tower> towers_;  // in task order
};

}  // namespace tzrec::models
