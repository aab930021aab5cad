// DAT, the Dual Augmented Two-tower model (tzrec/models/dat.py, docs/models/dat.md): each tower
// reads its feature group and an augment group (`augment_input`, e.g. the id's embedding), whose
// embedding output is concatenated to the tower's input and, in training, pulled towards the other
// tower's (detached) output by the adaptive-mimic-mechanism losses:
//   amm_loss_u = amm_u_weight · Σ_b,d (normalize(user_augment_b) − item_emb_b)²
//   amm_loss_i = amm_i_weight · Σ_b,d (normalize(item_augment_b) − user_emb_b)²
// (sums over the batch's B rows and the width, as TorchEasyRec; with a sample weight field, the row
// sums weighted: mean(loss_b · w_b) / mean(w)). The augment groups must be as wide as the towers'
// outputs. Training predictions also have "user_augment", "item_augment", "user_tower_emb",
// "item_tower_emb" (detached). Submodules: "user_tower", "item_tower" (match_tower.h), each with
// its own "embedding_group" over its two groups.
#pragma once

#include "models/match/match_model.h"
#include "models/match/match_tower.h"

namespace tzrec::models {

class DAT : public MatchModel {
 public:
  DAT(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
      std::vector<std::string> labels, std::vector<std::string> sample_weights, const std::string& tower = "");

 protected:
  TensorMap predict_similarity(const sparse::Batch& batch) override;
  torch::Tensor tower_embedding(const std::string& tower, const sparse::Batch& batch) override;
  TensorMap extra_losses(const TensorMap& predictions, const sparse::Batch& batch) const override;

 private:
  MatchTower user_tower_{nullptr};
  MatchTower item_tower_{nullptr};
  std::string user_augment_, item_augment_;
  double amm_u_weight_ = 0.5, amm_i_weight_ = 0.5;
};

}  // namespace tzrec::models
