#include "models/match/dat.h"

#include <cmath>

#include <fmt/format.h>

#include "base/error.h"
#include "loss/l2_loss.h"

namespace tzrec::models {

DAT::DAT(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
         std::vector<std::string> labels, std::vector<std::string> sample_weights, const std::string& tower)
    : MatchModel(model_config, std::move(labels), std::move(sample_weights), model_config.dat(), "model_config.dat",
                 tower) {
  const protos::DAT& cfg = model_config_.dat();
  set_features(features);
  amm_u_weight_ = cfg.amm_u_weight();
  amm_i_weight_ = cfg.amm_i_weight();
  for (const auto& [field, w] : {std::pair{"amm_u_weight", amm_u_weight_}, std::pair{"amm_i_weight", amm_i_weight_}}) {
    if (!std::isfinite(w) || w < 0) {
      throw ConfigError(fmt::format("{}.{}: must be a finite number >= 0, got {}", path(), field, w));
    }
  }
  user_augment_ = cfg.user_tower().augment_input();
  item_augment_ = cfg.item_tower().augment_input();
  auto build = [&](const char* name, const protos::DATTower& t) {
    const std::string field = path() + "." + name;
    check_tower_group(name, t.input(), field + ".input");
    check_tower_group(name, t.augment_input(), field + ".augment_input");
    return register_own_group_tower(name, {t.input(), t.augment_input()}, t.has_mlp() ? &t.mlp() : nullptr);
  };
  if (has_tower(kUserTower)) user_tower_ = build(kUserTower, cfg.user_tower());
  if (has_tower(kItemTower)) item_tower_ = build(kItemTower, cfg.item_tower());
  if (user_tower_ && item_tower_) {
    // Each augment vector is compared with the other tower's output.
    auto check = [&](const char* name, const MatchTower& own, const std::string& augment, const MatchTower& other) {
      const int64_t width = own->embedding_group->group_total_dim(augment);
      if (width != other->output_dim()) {
        throw ConfigError(fmt::format(
            "{}.{}.augment_input: group '{}' is {} wide but the AMM loss compares it with the other tower's output, "
            "which is {} wide; make them equal (e.g. the augment feature's embedding_dim = output_dim)",
            path(), name, augment, width, other->output_dim()));
      }
    };
    check(kUserTower, user_tower_, user_augment_, item_tower_);
    check(kItemTower, item_tower_, item_augment_, user_tower_);
  }
}

TensorMap DAT::predict_similarity(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> user_groups, item_groups;
  torch::Tensor user = user_tower_->forward(batch, &user_groups);  // [B, D]
  torch::Tensor item = item_tower_->forward(batch, &item_groups);  // [B + N (+ H), D]
  TensorMap out = {{"similarity", similarity(user, item, batch)}};
  if (is_training()) {
    out["user_augment"] = user_rows(user_groups.at(user_augment_), batch);
    out["item_augment"] = item_groups.at(item_augment_);
    out["user_tower_emb"] = user_rows(user, batch).detach();
    out["item_tower_emb"] = item.detach();
  }
  return out;
}

torch::Tensor DAT::tower_embedding(const std::string& tower, const sparse::Batch& batch) {
  TORCH_CHECK(has_tower(tower), "DAT: no tower ", tower);
  return (tower == kUserTower ? user_tower_ : item_tower_)->forward(batch);
}

TensorMap DAT::extra_losses(const TensorMap& predictions, const sparse::Batch& batch) const {
  TensorMap out;
  if (predictions.count("user_augment") == 0) return out;  // eval: no augment outputs (as TorchEasyRec)
  const int64_t b = predictions.at("similarity").size(0);
  namespace F = torch::nn::functional;
  const auto normalize = F::NormalizeFuncOptions().p(2.0).dim(1);
  // [B] per-row squared distances.
  torch::Tensor u = (F::normalize(predictions.at("user_augment"), normalize) -
                     predictions.at("item_tower_emb").narrow(0, 0, b)).square().sum(1);
  torch::Tensor i = (F::normalize(predictions.at("item_augment").narrow(0, 0, b), normalize) -
                     predictions.at("user_tower_emb")).square().sum(1);
  // With a sample weight: mean(rows · w / mean(w)), 0 where that is not finite (tzrec div_no_nan).
  const torch::Tensor weight = task_loss_weight(tasks_.front(), batch);
  auto reduce = [&](const torch::Tensor& rows) {
    if (!weight.defined()) return rows.sum();
    return (rows * loss::normalize_sample_weights(weight.to(rows.device()), rows.scalar_type())).mean();
  };
  out["amm_loss_u"] = amm_u_weight_ * reduce(u);
  out["amm_loss_i"] = amm_i_weight_ * reduce(i);
  return out;
}

}  // namespace tzrec::models
