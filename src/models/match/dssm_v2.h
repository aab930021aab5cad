// DSSMv2 (tzrec/models/dssm_v2.py, docs/models/dssm_v2.md): DSSM with one embedding group shared
// by both towers ("embedding_group", the model-level group: a table named by both towers' features
// is one table), each tower reading its feature group from it; the towers hold their MLP, output
// Linear and group variational dropout ("user_tower.mlp…", "item_tower.output…"). A model of one
// tower has the shared group over that tower's feature group only (TorchEasyRec's
// TowerWoEGWrapper: the same table names).
#pragma once

#include "models/match/match_tower.h"
#include "models/match/match_model.h"

namespace tzrec::models {

class DSSMV2 : public MatchModel {
 public:
  DSSMV2(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
         std::vector<std::string> labels, std::vector<std::string> sample_weights, const std::string& tower = "");

 protected:
  TensorMap predict_similarity(const sparse::Batch& batch) override;
  torch::Tensor tower_embedding(const std::string& tower, const sparse::Batch& batch) override;

 private:
  MatchTower user_tower_{nullptr};
  MatchTower item_tower_{nullptr};
};

}  // namespace tzrec::models
