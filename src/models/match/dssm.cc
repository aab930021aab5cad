#include "models/match/dssm.h"

#include "base/error.h"

namespace tzrec::models {

DSSM::DSSM(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
           std::vector<std::string> labels, std::vector<std::string> sample_weights, const std::string& tower)
    : MatchModel(model_config, std::move(labels), std::move(sample_weights), model_config.dssm(), "model_config.dssm",
                 tower) {
  const protos::DSSM& cfg = model_config_.dssm();
  set_features(features);
  auto build = [&](const char* name, const protos::Tower& tower) {
    check_tower_group(name, tower.input(), path() + "." + name + ".input");
    return register_own_group_tower(name, {tower.input()}, tower.has_mlp() ? &tower.mlp() : nullptr);
  };
  if (has_tower(kUserTower)) user_tower_ = build(kUserTower, cfg.user_tower());
  if (has_tower(kItemTower)) item_tower_ = build(kItemTower, cfg.item_tower());
}

TensorMap DSSM::predict_similarity(const sparse::Batch& batch) {
  torch::Tensor user = user_tower_->forward(batch);  // [B, D]
  torch::Tensor item = item_tower_->forward(batch);  // [B + N (+ H), D]
  return {{"similarity", similarity(user, item, batch)}};
}

torch::Tensor DSSM::tower_embedding(const std::string& tower, const sparse::Batch& batch) {
  TORCH_CHECK(has_tower(tower), "DSSM: no tower ", tower);
  return (tower == kUserTower ? user_tower_ : item_tower_)->forward(batch);
}

}  // namespace tzrec::models
