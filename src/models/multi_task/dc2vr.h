// DC2VR, deconfounded conversion-rate modelling (tzrec/models/dc2vr.py; docs/tzrec-compatibility.md
// §4): the first feature group → optional bottom_mlp → optional MMoE (when expert_mlp is set:
// one input per task) → per task an optional tower MLP → for towers with low_rank_dim an
// nn::Intervention of the tower's representation by the (detached) representations of its
// intervention_tower_names, concatenated → a Linear to num_class. Towers are evaluated in config
// order, so a tower intervenes only with towers listed before it.
// Submodules (state-dict prefixes): embedding_group, bottom_mlp, mmoe, task_mlps.<tower_name>,
// intervention.<tower_name>, task_outputs.<i>.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "models/model.h"
#include "nn/intervention.h"
#include "nn/mlp.h"
#include "nn/mmoe.h"

namespace tzrec::models {

class DC2VR : public Model {
 public:
  // Throws ConfigError naming the field for an intervention tower that is not an earlier tower,
  // a low_rank_dim not below the widths it rotates, or low_rank_dim without intervention towers.
  DC2VR(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
        std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;

 private:
  struct Tower {
    std::string name;
    nn::MLP mlp{nullptr};                    // optional
    nn::Intervention intervention{nullptr};  // with low_rank_dim
    std::vector<size_t> sources;             // indices of its intervention towers (all earlier)
    torch::nn::Linear output{nullptr};
  };

  std::string group_;
  nn::MLP bottom_mlp_{nullptr};
  nn::MMoE mmoe_{nullptr};
  std::vector<Tower> towers_;  // in task order
};

}  // namespace tzrec::models
