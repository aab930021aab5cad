#include "models/match/mind.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::models {

torch::Tensor label_aware_attention(const torch::Tensor& interests, const torch::Tensor& mask, const torch::Tensor& pos,
                                    double simi_pow) {
  torch::Tensor w = torch::einsum("bkd,bd->bk", {interests, pos});  // [B, K]
  const double inf = std::numeric_limits<double>::infinity();
  w = torch::minimum(w, (mask.to(w.scalar_type()) * 2 - 1) * inf) * simi_pow;
  w = torch::softmax(w, 1).unsqueeze(-1);  // [B, K, 1]
  return (w * interests).sum(1);
}

MIND::MIND(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
           std::vector<std::string> labels, std::vector<std::string> sample_weights, const std::string& tower)
    : MatchModel(model_config, std::move(labels), std::move(sample_weights), model_config.mind(),
                 "model_config.mind", tower) {
  const protos::MIND& cfg = model_config_.mind();
  set_features(features);
  simi_pow_ = cfg.simi_pow();
  if (!std::isfinite(simi_pow_) || simi_pow_ <= 0) {
    throw ConfigError(fmt::format("{}.simi_pow: must be a positive number (masked interests are −inf before it "
                                  "scales them), got {}",
                                  path(), simi_pow_));
  }
  if (has_tower(kUserTower)) {
    const protos::MINDUserTower& t = cfg.user_tower();
    const std::string field = path() + ".user_tower";
    check_tower_group(kUserTower, t.input(), field + ".input");
    if (t.history_input().empty()) throw ConfigError(field + ".history_input: required; name a SEQUENCE group");
    require_group("mind", t.history_input(), protos::SEQUENCE);
    user_tower_ = register_tower(kUserTower, MINDUserTower(t, field, make_embedding_group({t.input(), t.history_input()}),
                                                           model_config_, options()));
  }
  if (has_tower(kItemTower)) {
    const protos::Tower& t = cfg.item_tower();
    check_tower_group(kItemTower, t.input(), path() + ".item_tower.input");
    item_tower_ = register_own_group_tower(kItemTower, {t.input()}, t.has_mlp() ? &t.mlp() : nullptr);
  }
}

TensorMap MIND::predict_similarity(const sparse::Batch& batch) {
  auto [all_interests, all_mask] = user_tower_->forward(batch);  // [B, K, D], [B, K]
  const torch::Tensor interests = user_rows(all_interests, batch), mask = user_rows(all_mask, batch);
  torch::Tensor item = item_tower_->forward(batch);  // [B + N (+ H), D]
  torch::Tensor user = label_aware_attention(interests, mask, item.narrow(0, 0, interests.size(0)), simi_pow_);
  return {{"similarity", similarity(user, item, batch)}};
}

torch::Tensor MIND::tower_embedding(const std::string& tower, const sparse::Batch& batch) {
  TORCH_CHECK(has_tower(tower), "MIND: no tower ", tower);
  if (tower == kUserTower) return user_tower_->forward(batch).first;
  return item_tower_->forward(batch);
}

}  // namespace tzrec::models
