#include "models/match/dssm_v2.h"

#include "base/error.h"

namespace tzrec::models {

DSSMV2::DSSMV2(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
               std::vector<std::string> labels, std::vector<std::string> sample_weights, const std::string& tower)
    : MatchModel(model_config, std::move(labels), std::move(sample_weights), model_config.dssm_v2(),
                 "model_config.dssm_v2", tower) {
  const protos::DSSMV2& cfg = model_config_.dssm_v2();
  set_features(features);
  std::vector<std::string> groups;  // the feature groups the built towers read
  if (has_tower(kUserTower)) {
    check_tower_group(kUserTower, cfg.user_tower().input(), path() + ".user_tower.input");
    groups.push_back(cfg.user_tower().input());
  }
  if (has_tower(kItemTower)) {
    check_tower_group(kItemTower, cfg.item_tower().input(), path() + ".item_tower.input");
    groups.push_back(cfg.item_tower().input());
  }
  embedding_group_ = register_module(
      "embedding_group", make_embedding_group(this->tower().empty() ? std::vector<std::string>{} : groups));
  embeddings_.add("embedding_group", "", embedding_group_);
  auto build = [&](const char* name, const protos::Tower& tower) {
    return register_tower(name, MatchTower(std::vector<std::string>{tower.input()},
                                           tower.has_mlp() ? &tower.mlp() : nullptr, path() + "." + name, nullptr,
                                           *embedding_group_, model_config_, options()));
  };
  if (has_tower(kUserTower)) user_tower_ = build(kUserTower, cfg.user_tower());
  if (has_tower(kItemTower)) item_tower_ = build(kItemTower, cfg.item_tower());
}

TensorMap DSSMV2::predict_similarity(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = embedding_group_->forward(batch);
  const std::string& user_group = model_config_.dssm_v2().user_tower().input();
  torch::Tensor user = user_tower_->forward({{user_group, user_rows(grouped.at(user_group), batch)}});  // [B, D]
  torch::Tensor item = item_tower_->forward(grouped);  // [B + N (+ H), D]
  return {{"similarity", similarity(user, item, batch)}};
}

torch::Tensor DSSMV2::tower_embedding(const std::string& tower, const sparse::Batch& batch) {
  TORCH_CHECK(has_tower(tower), "DSSMv2: no tower ", tower);
  return (tower == kUserTower ? user_tower_ : item_tower_)->forward(embedding_group_->forward(batch));
}

}  // namespace tzrec::models
