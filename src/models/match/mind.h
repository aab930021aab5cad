// MIND, Multi-Interest Network with Dynamic routing (tzrec/models/mind.py, docs/models/mind.md): the
// user tower (mind_user_tower.h) gives each user up to max_k interest vectors; the item tower is a
// MatchTower over the item group. For scoring, label-aware attention picks each user's vector by
// the positive item e_b = item_emb[b]:
//   w_bk = softmax_k(simi_pow · (valid_k ? <interest_bk, e_b> : −inf)),  user_b = Σ_k w_bk interest_bk
// and the similarity follows match_model.h. The user tower's export predicts "user_tower_emb"
// [B, max_k, D] (invalid interests zero), as TorchEasyRec's; `tzrec hitrate --num_interests max_k`
// reads it.
#pragma once

#include "models/match/match_model.h"
#include "models/match/match_tower.h"
#include "models/match/mind_user_tower.h"

namespace tzrec::models {

// user_emb [B, D] from interests [B, K, D], mask [B, K] bool and the positive items pos [B, D].
torch::Tensor label_aware_attention(const torch::Tensor& interests, const torch::Tensor& mask, const torch::Tensor& pos,
                                    double simi_pow);

class MIND : public MatchModel {
 public:
  MIND(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
       std::vector<std::string> labels, std::vector<std::string> sample_weights, const std::string& tower = "");

 protected:
  TensorMap predict_similarity(const sparse::Batch& batch) override;
  torch::Tensor tower_embedding(const std::string& tower, const sparse::Batch& batch) override;

 private:
  MINDUserTower user_tower_{nullptr};
  MatchTower item_tower_{nullptr};
  double simi_pow_ = 10.0;
};

}  // namespace tzrec::models
