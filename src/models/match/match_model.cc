#include "models/match/match_model.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "nn/sampled_similarity.h"
#include "tzrec/protos/simi.pb.h"

namespace tzrec::models {

MatchOptions MatchModel::match_options(int64_t output_dim, int similarity, double temperature,
                                       bool in_batch_negative, const std::string& path) {
  if (output_dim < 0) throw ConfigError(fmt::format("{}.output_dim: must be >= 0, got {}", path, output_dim));
  if (!(temperature > 0) || !std::isfinite(temperature)) {
    throw ConfigError(fmt::format("{}.temperature: must be a positive number (similarities are divided by it), got {}",
                                  path, temperature));
  }
  if (similarity == protos::EUCLID) {
    throw NotSupportedError(fmt::format("{}.similarity EUCLID (TorchEasyRec's towers score it as INNER_PRODUCT); use "
                                        "INNER_PRODUCT or COSINE",
                                        path));
  }
  return MatchOptions{output_dim, similarity == protos::COSINE, temperature, in_batch_negative};
}

std::vector<std::pair<std::string, std::vector<std::string>>> match_towers(const protos::ModelConfig& model_config) {
  const auto* oneof = model_config.GetDescriptor()->FindOneofByName("model");
  const auto* set = model_config.GetReflection()->GetOneofFieldDescriptor(model_config, oneof);
  TORCH_CHECK(set != nullptr, "match_towers: no model set");
  const google::protobuf::Message& m = model_config.GetReflection()->GetMessage(model_config, set);
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  if (model_config.has_hstu_match()) {  // HSTUMatch's user tower reads every group but the candidates
    const std::string& candidates = model_config.hstu_match().item_tower().input();
    std::vector<std::string> user;
    for (const auto& g : model_config.feature_groups()) {
      if (g.group_name() != candidates) user.push_back(g.group_name());
    }
    return {{MatchModel::kUserTower, user}, {MatchModel::kItemTower, {candidates}}};
  }
  for (const char* tower : {MatchModel::kUserTower, MatchModel::kItemTower}) {
    const auto* field = m.GetDescriptor()->FindFieldByName(tower);
    TORCH_CHECK(field != nullptr, "match model ", set->name(), " has no ", tower);
    const google::protobuf::Message& t = m.GetReflection()->GetMessage(m, field);
    std::vector<std::string> groups;
    for (const char* name : {"input", "augment_input", "history_input"}) {
      const auto* input = t.GetDescriptor()->FindFieldByName(name);
      if (input != nullptr && t.GetReflection()->HasField(t, input)) groups.push_back(t.GetReflection()->GetString(t, input));
    }
    out.emplace_back(tower, std::move(groups));
  }
  return out;
}

std::string MatchModel::checked_tower(const std::string& tower) {
  if (!tower.empty() && tower != kUserTower && tower != kItemTower) {
    throw UsageError(fmt::format("no tower '{}' in a match model; its towers are {} and {}", tower, kUserTower,
                                 kItemTower));
  }
  return tower;
}

TensorMap MatchModel::predict_impl(const sparse::Batch& batch) {
  if (tower_.empty()) return predict_similarity(batch);
  return {{tower_ + "_emb", tower_embedding(tower_, batch)}};
}

void MatchModel::check_tower_group(const std::string& tower, const std::string& group,
                                   const std::string& field) const {
  if (group.empty()) throw ConfigError(field + ": required; name the feature group the tower reads");
  const std::string model = path_.substr(path_.rfind('.') + 1);
  require_group(model, group, protos::DEEP);
  if (!has_tower(kItemTower)) return;  // a model of the user tower alone scores nothing
  const bool sampler =
      std::any_of(features_.begin(), features_.end(), [](const feature::FeatureInfo& f) { return f.sampled; });
  if (!sampler) {
    if (!options_.in_batch_negative) {
      throw ConfigError(fmt::format(
          "{}.in_batch_negative: without a negative sampler in data_config each user is scored against its own item "
          "only; set in_batch_negative: true, or add a negative_sampler whose attr_fields are the item features",
          path_));
    }
    return;
  }
  if (tower != kItemTower) return;
  const protos::FeatureGroupConfig* g = nullptr;
  for (const auto& fg : model_config_.feature_groups()) {
    if (fg.group_name() == group) g = &fg;
  }
  std::vector<std::string> not_sampled;
  for (const std::string& name : g->feature_names()) {
    auto it = std::find_if(features_.begin(), features_.end(),
                           [&](const feature::FeatureInfo& f) { return f.name == name; });
    if (it != features_.end() && !it->sampled) not_sampled.push_back(name);
  }
  if (!not_sampled.empty()) {
    throw ConfigError(fmt::format(
        "{}: the item tower's group '{}' has features the negative sampler does not provide ({}); with a sampler "
        "the item features are the sampler's attr_fields — add them there or move them to the user group",
        field, group, fmt::join(not_sampled, ", ")));
  }
}

MatchTower MatchModel::register_own_group_tower(const std::string& name, std::vector<std::string> inputs,
                                               const protos::MLP* mlp) {
  embedding::EmbeddingGroup group = make_embedding_group(inputs);
  return register_tower(name, MatchTower(std::move(inputs), mlp, path_ + "." + name, group, *group, model_config_,
                                         options_));
}

TensorMap MatchModel::feature_p_losses() const {
  TensorMap out;
  for (const GroupVariationalDropouts* d : tower_dropouts_) out.insert(d->penalties().begin(), d->penalties().end());
  return out;
}

torch::Tensor match_similarity(const torch::Tensor& user_emb, const torch::Tensor& item_emb,
                               const torch::Tensor& hard, bool in_batch_negative, double temperature) {
  if (in_batch_negative) {
    torch::Tensor sim = torch::mm(user_emb, item_emb.t());  // [B, B]
    return temperature == 1.0 ? sim : sim / temperature;
  }
  const int64_t b = user_emb.size(0);
  const int64_t n_hard = hard.defined() ? hard.size(0) : 0;
  const int64_t simple = item_emb.size(0) - n_hard;
  TORCH_CHECK(simple >= b, "match model: ", item_emb.size(0), " item embeddings for ", b, " users and ", n_hard,
              " hard negatives");
  if (n_hard == 0) return nn::sampled_similarity(user_emb, item_emb, 1.0 / temperature);
  // [B, 1 + N]: the positives and the simple negatives, then the hard negatives' columns.
  torch::Tensor sampled = nn::sampled_similarity(user_emb, item_emb.narrow(0, 0, simple), 1.0);
  torch::Tensor rows = hard.select(1, 0).to(user_emb.device());
  torch::Tensor cols = hard.select(1, 1).to(user_emb.device());
  torch::Tensor hard_item = item_emb.narrow(0, simple, n_hard);                   // [H, D]
  torch::Tensor hard_sim = (user_emb.index_select(0, rows) * hard_item).sum(-1);  // [H]
  const int64_t width = cols.max().item<int64_t>() + 1;
  auto opts = hard_sim.options();
  torch::Tensor dense = torch::zeros({b, width}, opts).index_put({rows, cols}, hard_sim);
  torch::Tensor mask = torch::zeros({b, width}, opts).index_put({rows, cols}, torch::ones({n_hard}, opts));
  // Pairs that do not exist never rank.
  return torch::cat({sampled, dense - (1 - mask) * 1e32}, -1) / temperature;
}

torch::Tensor MatchModel::user_rows(const torch::Tensor& t, const sparse::Batch& batch) {
  return t.size(0) > batch.batch_size ? t.narrow(0, 0, batch.batch_size) : t;
}

torch::Tensor MatchModel::similarity(const torch::Tensor& user_emb, const torch::Tensor& item_emb,
                                     const sparse::Batch& batch) const {
  return match_similarity(user_rows(user_emb, batch), item_emb, batch.hard_neg_indices, options_.in_batch_negative,
                          options_.temperature);
}

}  // namespace tzrec::models
