// validate(): model_config checks (feature groups, model, losses, metrics, MLPs).
#include <map>

#include <fmt/format.h>

#include "base/error.h"
#include "config/activation.h"
#include "config/validate_internal.h"

namespace tzrec::config::detail {

namespace {

using Features = std::map<std::string, const protos::FeatureConfig*>;
using Groups = std::map<std::string, int>;

// Every name a feature group may reference; grouped-sequence sub-features map to nullptr.
Features index_features(const protos::EasyRecConfig& config) {
  Features index;
  for (const auto& f : config.feature_configs()) {
    if (!f.has_sequence_feature()) {
      index.emplace(feature_name(f), &f);
      continue;
    }
    const auto& seq = f.sequence_feature();
    for (const auto& sub : seq.features()) {
      const auto* oneof = protos::SeqFeatureConfig::descriptor()->FindOneofByName("feature");
      const auto* field = sub.GetReflection()->GetOneofFieldDescriptor(sub, oneof);
      if (!field) continue;
      const auto& msg = sub.GetReflection()->GetMessage(sub, field);
      const auto* name = msg.GetDescriptor()->FindFieldByName("feature_name");
      index.emplace(seq.sequence_name() + "__" + msg.GetReflection()->GetString(msg, name),
                    nullptr);
    }
  }
  return index;
}

std::string group_path(int i) { return item_path("model_config", "feature_groups", i); }

void check_groups(const protos::ModelConfig& model, const Features& features, Groups* groups,
                  Problems* problems) {
  for (int i = 0; i < model.feature_groups_size(); ++i) {
    const auto& g = model.feature_groups(i);
    const std::string gp = group_path(i);
    if (g.group_name().empty()) {
      problems->add(gp + ".group_name", "required");
    } else if (auto [it, inserted] = groups->emplace(g.group_name(), i); !inserted) {
      problems->add(gp + ".group_name", fmt::format("duplicate group name '{}' (also {})",
                                                    g.group_name(), group_path(it->second)));
    }
    if (g.feature_names_size() == 0 && g.sequence_groups_size() == 0) {
      problems->add(gp + ".feature_names", "group has no features");
    }
    for (int j = 0; j < g.feature_names_size(); ++j) {
      const std::string& name = g.feature_names(j);
      auto it = features.find(name);
      if (it == features.end()) {
        problems->add(item_path(gp, "feature_names", j), "unknown feature '" + name + "'");
      } else if (g.group_type() == protos::WIDE && it->second && !is_sparse_feature(*it->second)) {
        problems->add(item_path(gp, "feature_names", j),
                      "WIDE group needs sparse features (id_feature, or raw_feature with "
                      "boundaries), '" + name + "' is dense");
      }
    }
    if (g.group_type() == protos::SEQUENCE || g.group_type() == protos::JAGGED_SEQUENCE) {
      problems->not_supported(gp + ".group_type", protos::FeatureGroupType_Name(g.group_type()));
    }
    if (g.sequence_groups_size() > 0) problems->not_supported(gp + ".sequence_groups");
    if (g.sequence_encoders_size() > 0) problems->not_supported(gp + ".sequence_encoders");
    if (!g.embedding_name_suffix().empty()) problems->not_supported(gp + ".embedding_name_suffix");
  }
}

// FM input: sparse features with one common embedding_dim.
void check_fm_group(const protos::FeatureGroupConfig& g, int gi, const Features& features,
                    Problems* problems) {
  std::string first_name;
  uint32_t first_dim = 0;
  for (int j = 0; j < g.feature_names_size(); ++j) {
    auto it = features.find(g.feature_names(j));
    if (it == features.end() || !it->second) continue;  // reported elsewhere
    const std::string path = item_path(group_path(gi), "feature_names", j);
    if (!is_sparse_feature(*it->second)) {
      problems->add(path, "FM needs sparse features with equal embedding_dim, '" + it->first +
                              "' is dense");
      continue;
    }
    const uint32_t dim = feature_embedding_dim(*it->second);
    if (first_name.empty()) {
      first_name = it->first;
      first_dim = dim;
    } else if (dim != first_dim) {
      problems->add(path, fmt::format("FM needs equal embedding_dim: '{}' has {}, '{}' has {}",
                                      it->first, dim, first_name, first_dim));
    }
  }
}

void check_deepfm(const protos::ModelConfig& model, const Features& features,
                  const Groups& groups, Problems* problems) {
  const std::string p = "model_config.deepfm";
  const auto& deepfm = model.deepfm();
  auto need_group = [&](const std::string& name, protos::FeatureGroupType type, bool optional) {
    auto it = groups.find(name);
    const std::string type_name = protos::FeatureGroupType_Name(type);
    if (it == groups.end()) {
      if (!optional) {
        problems->add("model_config.feature_groups",
                      "DeepFM needs a feature group named '" + name + "' (group_type: " +
                          type_name + ")");
      }
      return -1;
    }
    if (model.feature_groups(it->second).group_type() != type) {
      problems->add(group_path(it->second) + ".group_type",
                    "DeepFM group '" + name + "' must be " + type_name);
    }
    return it->second;
  };
  need_group("wide", protos::WIDE, false);
  const int deep = need_group("deep", protos::DEEP, false);
  const int fm = need_group("fm", protos::DEEP, true);
  const int fm_input = fm >= 0 ? fm : deep;
  if (fm_input >= 0) check_fm_group(model.feature_groups(fm_input), fm_input, features, problems);

  if (!deepfm.has_deep()) {
    problems->add(p + ".deep", "required");
  } else {
    validate_mlp(deepfm.deep(), p + ".deep", problems);
  }
  if (deepfm.has_final()) validate_mlp(deepfm.final(), p + ".final", problems);
  if (deepfm.wide_embedding_dim() == 0) problems->add(p + ".wide_embedding_dim", "must be > 0");
}

void check_multi_tower(const protos::ModelConfig& model, const Groups& groups,
                       Problems* problems) {
  const std::string p = "model_config.multi_tower";
  const auto& mt = model.multi_tower();
  if (mt.towers_size() == 0) problems->add(p + ".towers", "needs at least one tower");
  for (int k = 0; k < mt.towers_size(); ++k) {
    const auto& tower = mt.towers(k);
    const std::string tp = item_path(p, "towers", k);
    if (tower.input().empty()) {
      problems->add(tp + ".input", "required");
    } else if (!groups.count(tower.input())) {
      problems->add(tp + ".input", "unknown feature group '" + tower.input() + "'");
    }
    if (!tower.has_mlp()) {
      problems->add(tp + ".mlp", "required");
    } else {
      validate_mlp(tower.mlp(), tp + ".mlp", problems);
    }
  }
  if (!mt.has_final()) {
    problems->add(p + ".final", "required");
  } else {
    validate_mlp(mt.final(), p + ".final", problems);
  }
}

std::string oneof_set(const google::protobuf::Message& msg, const char* oneof_name) {
  const auto* oneof = msg.GetDescriptor()->FindOneofByName(oneof_name);
  const auto* field = msg.GetReflection()->GetOneofFieldDescriptor(msg, oneof);
  return field ? field->name() : "";
}

void check_losses_and_metrics(const protos::ModelConfig& model, Problems* problems) {
  const std::string p = "model_config";
  if (model.losses_size() == 0) {
    problems->add(p + ".losses", "needs at least one loss, e.g. losses { binary_cross_entropy {} }");
  }
  for (int i = 0; i < model.losses_size(); ++i) {
    const auto& loss = model.losses(i);
    const std::string lp = item_path(p, "losses", i);
    const std::string name = oneof_set(loss, "loss");
    const std::string sid = oneof_set(loss, "sid_loss");
    if (!sid.empty()) problems->not_supported(lp + "." + sid);
    if (name.empty()) {
      if (sid.empty()) problems->add(lp, "no loss type set (e.g. binary_cross_entropy {})");
    } else if (name == "binary_cross_entropy") {
      const float ls = loss.binary_cross_entropy().label_smoothing();
      if (!(ls >= 0 && ls <= 1)) {
        problems->add(lp + ".binary_cross_entropy.label_smoothing", "must be in [0, 1]");
      }
    } else if (name == "binary_focal_loss") {
      if (!(loss.binary_focal_loss().gamma() >= 0)) problems->add(lp + ".binary_focal_loss.gamma", "must be >= 0");
      const float alpha = loss.binary_focal_loss().alpha();
      if (!(alpha > 0 && alpha < 1)) problems->add(lp + ".binary_focal_loss.alpha", "must be in (0, 1)");
    } else if (name != "l2_loss") {
      problems->not_supported(lp + "." + name);
    }
  }
  for (int i = 0; i < model.metrics_size(); ++i) {
    const auto& metric = model.metrics(i);
    const std::string mp = item_path(p, "metrics", i);
    const std::string name = oneof_set(metric, "metric");
    if (name.empty()) {
      problems->add(mp, "no metric type set (e.g. auc {})");
    } else if (name == "auc") {
      if (metric.auc().thresholds() <= 1) problems->add(mp + ".auc.thresholds", "must be > 1");
    } else if (name == "accuracy") {
      const float t = metric.accuracy().threshold();
      if (!(t >= 0 && t <= 1)) problems->add(mp + ".accuracy.threshold", "must be in [0, 1]");
    } else if (name == "normalized_entropy") {
      const float eta = metric.normalized_entropy().eta();
      if (!(eta >= 0 && eta < 0.5)) problems->add(mp + ".normalized_entropy.eta", "must be in [0, 0.5)");
    } else if (name == "grouped_auc") {
      if (metric.grouped_auc().grouping_key().empty()) {
        problems->add(mp + ".grouped_auc.grouping_key", "must name a sparse feature (e.g. a user id feature)");
      }
    } else if (name != "mean_absolute_error" && name != "mean_squared_error") {
      problems->not_supported(mp + "." + name);
    }
  }
  // Metrics read the prediction their loss produces (tzrec: predictions["y"] / ["probs"]).
  bool has_l2 = false, has_binary = false;
  for (const auto& loss : model.losses()) {
    has_l2 |= loss.has_l2_loss();
    has_binary |= loss.has_binary_cross_entropy() || loss.has_binary_focal_loss();
  }
  for (int i = 0; i < model.metrics_size(); ++i) {
    const std::string name = oneof_set(model.metrics(i), "metric");
    const std::string mp = item_path(p, "metrics", i) + "." + name;
    if ((name == "mean_absolute_error" || name == "mean_squared_error") && !has_l2) {
      problems->add(mp, "needs the regression prediction 'y'; add losses { l2_loss {} }");
    } else if ((name == "auc" || name == "accuracy" || name == "normalized_entropy" || name == "grouped_auc") &&
               !has_binary && model.losses_size() > 0) {
      problems->add(mp, "needs prediction 'probs'; add losses { binary_cross_entropy {} } or binary_focal_loss");
    }
  }
  if (model.train_metrics_size() > 0) problems->not_supported(p + ".train_metrics");
}

}  // namespace

void validate_mlp(const protos::MLP& mlp, const std::string& path, Problems* problems) {
  const int n = mlp.hidden_units_size();
  if (n == 0) problems->add(path + ".hidden_units", "needs at least one layer");
  for (int k = 0; k < n; ++k) {
    if (mlp.hidden_units(k) == 0) problems->add(item_path(path, "hidden_units", k), "must be > 0");
  }
  const int d = mlp.dropout_ratio_size();
  if (d != 0 && d != 1 && d != n) {
    problems->add(path + ".dropout_ratio",
                  fmt::format("needs 0, 1 or {} values (one per hidden unit), got {}", n, d));
  }
  for (int k = 0; k < d; ++k) {
    const float r = mlp.dropout_ratio(k);
    if (!(r >= 0 && r < 1)) problems->add(item_path(path, "dropout_ratio", k), "must be in [0, 1)");
  }
  try {
    (void)parse_activation(mlp.activation());
  } catch (const NotSupportedError&) {
    problems->not_supported(path + ".activation", mlp.activation());
  } catch (const ConfigError& e) {
    problems->add(path + ".activation", e.what());
  }
}

void validate_model(const protos::EasyRecConfig& config, Problems* problems) {
  if (!config.has_model_config()) {
    problems->add("model_config", "required");
    return;
  }
  const auto& model = config.model_config();
  const std::string p = "model_config";
  const Features features = index_features(config);
  Groups groups;
  check_groups(model, features, &groups, problems);

  const std::string name = oneof_set(model, "model");
  if (name.empty()) {
    problems->add(p, "needs a model, e.g. deepfm { ... } or multi_tower { ... }");
  } else if (name == "deepfm") {
    check_deepfm(model, features, groups, problems);
  } else if (name == "multi_tower") {
    check_multi_tower(model, groups, problems);
  } else {
    problems->not_supported(p + "." + name);
  }
  if (model.num_class() != 1) {
    problems->not_supported(p + ".num_class", std::to_string(model.num_class()));
  }
  if (model.has_variational_dropout()) problems->not_supported(p + ".variational_dropout");
  if (model.use_pareto_loss_weight()) problems->not_supported(p + ".use_pareto_loss_weight");
  check_losses_and_metrics(model, problems);
}

}  // namespace tzrec::config::detail
