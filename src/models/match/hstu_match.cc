#include "models/match/hstu_match.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"
#include "config/feature_util.h"
#include "feature/features.h"
#include "models/config_convert.h"
#include "models/generative/hstu_config.h"

namespace tzrec::models {

namespace {

constexpr const char* kPath = "model_config.hstu_match";
constexpr const char* kQueryTime = "query_time";

// `grouped` without the outputs of group `group` ("<group>.…"): the user tower's inputs, so that a
// descending run does not flip the candidates it never reads (TorchEasyRec filters them too).
std::map<std::string, torch::Tensor> without_group(const std::map<std::string, torch::Tensor>& grouped,
                                                   const std::string& group) {
  std::map<std::string, torch::Tensor> out;
  const std::string prefix = group + ".";
  for (const auto& [k, v] : grouped) {
    if (k.rfind(prefix, 0) != 0) out.emplace(k, v);
  }
  return out;
}

torch::Tensor l2_normalize(const torch::Tensor& x) {
  return torch::nn::functional::normalize(x, torch::nn::functional::NormalizeFuncOptions().p(2.0).dim(-1).eps(1e-6));
}

}  // namespace

HSTUMatchUserTowerImpl::HSTUMatchUserTowerImpl(const nn::gr::HSTUOptions& hstu, nn::gr::InputPreprocessorDims dims,
                                               int64_t max_seq_len, const std::string& path,
                                               std::string query_time_key, const MatchOptions& options,
                                               bool ascending)
    : ascending_(ascending), cosine_(options.cosine) {
  encoder_ = register_module("_hstu_encoder", nn::gr::HSTUMatchEncoder(hstu, std::move(dims), max_seq_len,
                                                                       path + ".hstu", std::move(query_time_key)));
  if (options.output_dim > 0) {
    output_ = register_module("output", torch::nn::Linear(encoder_->output_dim(), options.output_dim));
  }
}

torch::Tensor HSTUMatchUserTowerImpl::forward(const std::map<std::string, torch::Tensor>& grouped) {
  // Descending histories: every grouped input reversed along its rows, as TorchEasyRec flips the
  // whole dict (the jagged rows then read oldest first), and the users flipped back.
  torch::Tensor user = ascending_ ? encoder_->forward(grouped) : encoder_->forward(flip_grouped_rows(grouped)).flip({0});
  if (output_) user = output_->forward(user);
  return cosine_ ? l2_normalize(user) : user;
}

HSTUMatchItemTowerImpl::HSTUMatchItemTowerImpl(int64_t input_dim, const protos::MLP* mlp, const std::string& path,
                                               const MatchOptions& options)
    : cosine_(options.cosine), output_dim_(input_dim) {
  if (mlp != nullptr) {
    mlp_ = register_module("mlp", nn::MLP(input_dim, to_mlp_options(*mlp), path + ".mlp"));
    output_dim_ = mlp_->output_dim();
  }
  if (options.output_dim > 0) {
    output_ = register_module("output", torch::nn::Linear(output_dim_, options.output_dim));
    output_dim_ = options.output_dim;
  }
}

torch::Tensor HSTUMatchItemTowerImpl::forward(const torch::Tensor& x) {
  torch::Tensor item = mlp_ ? mlp_->forward(x) : x;
  if (output_) item = output_->forward(item);
  return cosine_ ? l2_normalize(item) : item;
}

HSTUMatch::HSTUMatch(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
                     std::vector<std::string> labels, std::vector<std::string> sample_weights, const std::string& tower)
    : MatchModel(model_config, std::move(labels), std::move(sample_weights), model_config.hstu_match(), kPath, tower) {
  const protos::HSTUMatch& cfg = model_config_.hstu_match();
  const std::string path = kPath;
  reads_jagged_sequences_ = true;
  reads_jagged_labels_ = true;  // read (as TorchEasyRec) but not used: the target is column 0
  if (options().in_batch_negative) {
    throw ConfigError(path + ".in_batch_negative: hstu_match scores each row's candidates against sampled "
                             "negatives (a row has several positives); set it false and configure a negative_sampler");
  }
  if (!tasks_.front().sample_weight_name.empty()) {
    throw ConfigError("data_config.sample_weight_fields: hstu_match has one loss term per candidate, not per row; "
                      "remove the sample weights");
  }
  const std::string uih = cfg.user_tower().input();
  candidate_group_ = cfg.item_tower().input();
  if (uih.empty()) throw ConfigError(path + ".user_tower.input: required; name the user history group (\"uih\")");
  if (candidate_group_.empty()) {
    throw ConfigError(path + ".item_tower.input: required; name the candidate group (\"candidate\")");
  }
  set_features(features);
  if (has_tower(kUserTower)) {
    require_group("hstu_match", uih, protos::JAGGED_SEQUENCE);
    require_group("hstu_match", uih + "_timestamp", protos::JAGGED_SEQUENCE);
  }
  if (has_tower(kItemTower)) require_group("hstu_match", candidate_group_, protos::JAGGED_SEQUENCE);
  // Every group is read by a tower (TorchEasyRec looks them up by these names); another name, or
  // query_time / contextual of a type no tower reads, would be silently unused.
  const std::vector<std::string> known = {uih,         uih + "_action",    uih + "_watchtime", uih + "_timestamp",
                                          "contextual", kQueryTime,        candidate_group_};
  for (const auto& g : model_config_.feature_groups()) {
    if (std::find(known.begin(), known.end(), g.group_name()) == known.end()) {
      throw ConfigError(fmt::format("{}.group_name: hstu_match reads no group '{}'; its groups are {} (and "
                                    "{}_action / {}_watchtime for the action encoder, optional contextual and "
                                    "query_time); remove it",
                                    group_path(g.group_name()), g.group_name(),
                                    fmt::format("{}, {}_timestamp, {}", uih, uih, candidate_group_), uih, uih));
    }
    if (g.group_name() == kQueryTime) require_group("hstu_match", kQueryTime, protos::DEEP);
    if (g.group_name() == "contextual" && g.group_type() == protos::JAGGED_SEQUENCE) {
      throw ConfigError(fmt::format("{}.group_type: hstu_match's contextual group must be DEEP (or SEQUENCE, whose "
                                    "query features are read)",
                                    group_path("contextual")));
    }
  }
  if (has_tower(kUserTower) && has_tower(kItemTower)) {
    const bool sampled = std::any_of(features_.begin(), features_.end(), [&](const feature::FeatureInfo& f) {
      return f.sampled && !f.sequence_name.empty();
    });
    if (!sampled) {
      throw ConfigError(fmt::format(
          "data_config: hstu_match trains on sampled negatives for the candidate sequence of group '{}'; add a "
          "negative_sampler whose item_id_field is the candidate sub-feature's input (e.g. \"cand_seq__video_id\") "
          "and whose attr_fields name the sub-features' inputs (e.g. \"video_id\")",
          candidate_group_));
    }
  }
  std::vector<std::string> groups;
  for (const auto& [name, tower_groups] : match_towers(model_config_)) {
    if (name == tower) groups = tower_groups;
  }
  embedding_group_ = register_module("embedding_group", make_embedding_group(groups));
  embeddings_.add("embedding_group", "", embedding_group_);
  auto seq = embedding_group_->sequence_groups();

  if (has_tower(kUserTower)) {
    nn::gr::InputPreprocessorDims dims;
    dims.name = uih == "uih" ? "" : uih;
    dims.uih_embedding_dim = seq->sequence_dim(uih);
    set_contextual_dims(*embedding_group_, false, [this](const std::string& g) { return group_path(g); }, "", &dims);
    std::string query_time;
    if (embedding_group_->has_group(kQueryTime)) {
      const int64_t d = embedding_group_->group_total_dim(kQueryTime);
      if (d != 1) {
        throw ConfigError(fmt::format("{}: group '{}' is the request time anchoring the time encoding, one raw "
                                      "value per row; it has width {}",
                                      group_path(kQueryTime), kQueryTime, d));
      }
      query_time = kQueryTime;
    }
    const nn::gr::HSTUOptions hstu = to_hstu_options(cfg.user_tower().hstu(), path + ".user_tower.hstu");
    if (cfg.user_tower().max_seq_len() == 0) {
      throw ConfigError(path + ".user_tower.max_seq_len: required and must be positive");
    }
    user_tower_ = register_module(
        kUserTower, HSTUMatchUserTower(hstu, dims, cfg.user_tower().max_seq_len(), path + ".user_tower", query_time,
                                       options(), cfg.sequence_timestamp_is_ascending()));
  }
  if (has_tower(kItemTower)) {
    // Training reads the candidates' items; the item tower's own package plain features, one item
    // per row (item_package_config).
    item_reads_items_ = seq->has_sequence(candidate_group_);
    const int64_t dim = item_reads_items_ ? seq->sequence_dim(candidate_group_) : seq->query_dim(candidate_group_);
    item_tower_ = register_module(kItemTower, HSTUMatchItemTower(dim, cfg.item_tower().has_mlp() ? &cfg.item_tower().mlp()
                                                                                                 : nullptr,
                                                                 path + ".item_tower", options()));
  }
}

TensorMap HSTUMatch::predict_similarity(const sparse::Batch& batch) {
  TORCH_CHECK(batch.candidate_pos_lengths.defined(),
              "hstu_match: the batch has no candidate positives (a negative sampler over the candidate sequence "
              "provides them)");
  auto grouped = embedding_group_->forward(batch);
  torch::Tensor user = user_tower_->forward(without_group(grouped, candidate_group_));   // [B, D]
  torch::Tensor item = item_tower_->forward(grouped.at(candidate_group_ + ".sequence"));  // [Q + N (+ H), D]
  torch::Tensor query = user.repeat_interleave(batch.candidate_pos_lengths.to(user.device()), 0);  // [Q, D]
  return {{"similarity", match_similarity(query, item, batch.hard_neg_indices, false, options().temperature)}};
}

torch::Tensor HSTUMatch::tower_embedding(const std::string& tower, const sparse::Batch& batch) {
  TORCH_CHECK(has_tower(tower), "HSTUMatch: no tower ", tower);
  auto grouped = embedding_group_->forward(batch);
  if (tower == kUserTower) return user_tower_->forward(grouped);
  // The item package: one item per row; else every candidate item of the rows, in order.
  return item_tower_->forward(grouped.at(candidate_group_ + (item_reads_items_ ? ".sequence" : ".query")));
}

protos::EasyRecConfig HSTUMatch::item_package_config(const protos::EasyRecConfig& config) {
  protos::EasyRecConfig out = config;
  const std::vector<feature::FeatureInfo> infos = feature::build_feature_infos(config);
  std::map<std::string, std::string> renamed;  // "<sequence>__<sub-feature>" → "<sub-feature>"
  out.clear_feature_configs();
  for (const protos::FeatureConfig& fc : config.feature_configs()) {
    if (!fc.has_sequence_feature()) {
      *out.add_feature_configs() = fc;
      continue;
    }
    const protos::SequenceFeature& seq = fc.sequence_feature();
    for (const protos::SeqFeatureConfig& sub : seq.features()) {
      protos::FeatureConfig plain;
      const auto* sub_oneof = sub.GetDescriptor()->FindOneofByName("feature");
      const auto* set = sub.GetReflection()->GetOneofFieldDescriptor(sub, sub_oneof);
      TORCH_CHECK(set != nullptr, "item_package_config: a sub-feature without a type");
      const auto* to = plain.GetDescriptor()->FindFieldByName(set->name());
      TORCH_CHECK(to != nullptr, "item_package_config: no plain feature type ", set->name());
      google::protobuf::Message* msg = plain.GetReflection()->MutableMessage(&plain, to);
      msg->CopyFrom(sub.GetReflection()->GetMessage(sub, set));
      // The sequence's effective default (an unset default_value is "0" in sequences).
      const auto* dv = msg->GetDescriptor()->FindFieldByName("default_value");
      if (dv != nullptr && msg->GetReflection()->GetString(*msg, dv).empty()) {
        msg->GetReflection()->SetString(msg, dv, "0");
      }
      const auto* name_field = msg->GetDescriptor()->FindFieldByName("feature_name");
      const std::string sub_name = msg->GetReflection()->GetString(*msg, name_field);
      const std::string full = config::grouped_sequence_prefix(seq.sequence_name()) + sub_name;
      renamed[full] = sub_name;
      const auto* vd = msg->GetDescriptor()->FindFieldByName("value_dim");
      if (vd != nullptr && !msg->GetReflection()->HasField(*msg, vd)) {
        for (const feature::FeatureInfo& f : infos) {
          if (f.name == full) msg->GetReflection()->SetUInt32(msg, vd, static_cast<uint32_t>(f.value_dim));
        }
      }
      *out.add_feature_configs() = plain;
    }
  }
  // The groups name the sub-features by their plain names.
  for (auto& g : *out.mutable_model_config()->mutable_feature_groups()) {
    for (auto& name : *g.mutable_feature_names()) {
      auto it = renamed.find(name);
      if (it != renamed.end()) name = it->second;
    }
  }
  return out;
}

}  // namespace tzrec::models
