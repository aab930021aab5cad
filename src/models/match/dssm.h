// DSSM (tzrec/models/dssm.py, docs/models/dssm.md): two towers, each with its own embedding group
// over its feature group (user_tower.input, item_tower.input; DEEP groups), an MLP and an optional
// output Linear (match_model.h for the similarity and the loss).
// Submodules: "user_tower", "item_tower" (match_tower.h), each with "embedding_group"; the
// embedding groups are members "user_tower.embedding_group" / "item_tower.embedding_group" of
// embeddings(), their tables named "user_tower.<table>" / "item_tower.<table>".
#pragma once

#include "models/match/match_tower.h"
#include "models/match/match_model.h"

namespace tzrec::models {

class DSSM : public MatchModel {
 public:
  DSSM(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
       std::vector<std::string> labels, std::vector<std::string> sample_weights, const std::string& tower = "");

 protected:
  TensorMap predict_similarity(const sparse::Batch& batch) override;
  torch::Tensor tower_embedding(const std::string& tower, const sparse::Batch& batch) override;

 private:
  MatchTower user_tower_{nullptr};
  MatchTower item_tower_{nullptr};
};

}  // namespace tzrec::models
