// validate(): model_config checks (feature groups, model, losses, metrics, MLPs).
#include <cmath>
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

// A key naming a sparse feature (grouping_key, session_name): required and configured.
void check_feature_key(const std::string& key, const std::string& path, const Features& features,
                       Problems* problems) {
  if (key.empty()) {
    problems->add(path, "must name a sparse feature (e.g. a user id feature)");
  } else if (auto it = features.find(key); it == features.end()) {
    problems->add(path, "unknown feature '" + key + "'; use the name of an id feature in feature_configs");
  } else if (it->second && !is_sparse_feature(*it->second)) {
    problems->add(path, "'" + key + "' is a dense feature; the key is the first id of a sparse feature");
  }
}

// What the configured losses predict (tzrec RankModel): "probs" [B] (binary), "probs" [B, C]
// (+ "probs1" for C == 2) (softmax / jrc), "y" (l2).
struct Predictions {
  uint32_t num_class = 1;
  bool binary = false;   // binary_cross_entropy / binary_focal_loss, num_class 1
  bool softmax = false;  // softmax_cross_entropy / jrc_loss, num_class > 1
  bool l2 = false;
};

// Checks that a metric (eval or train) finds the prediction it reads; `mp` = "<path>.<name>".
void check_metric_input(const std::string& name, const std::string& mp, const Predictions& pred, bool has_losses,
                        Problems* problems) {
  if (name == "mean_absolute_error" || name == "mean_squared_error" || name == "xauc" || name == "grouped_xauc") {
    if (!pred.l2) problems->add(mp, "needs the regression prediction 'y'; add losses { l2_loss {} }");
    return;
  }
  const bool binary_only = name == "auc" || name == "normalized_entropy" || name == "grouped_auc";
  const bool multiclass_only = name == "multiclass_auc";
  if (!binary_only && !multiclass_only && name != "accuracy") return;
  if (!has_losses) return;  // reported at model_config.losses
  if (pred.num_class == 1) {
    if (multiclass_only) {
      problems->add(mp, "needs num_class > 1 and losses { softmax_cross_entropy {} }; use auc for a binary model");
    } else if (!pred.binary) {
      problems->add(mp, "needs prediction 'probs'; add losses { binary_cross_entropy {} } or binary_focal_loss");
    }
  } else if (binary_only && pred.num_class > 2 && pred.softmax) {  // else the losses are reported
    problems->add(mp, fmt::format("needs a binary prediction (num_class 1 or 2), got num_class {}; use "
                                  "multiclass_auc or accuracy",
                                  pred.num_class));
  }
}

void check_losses(const protos::ModelConfig& model, const Features& features, Predictions* pred,
                  Problems* problems) {
  const std::string p = "model_config";
  if (model.losses_size() == 0) {
    problems->add(p + ".losses", "needs at least one loss, e.g. losses { binary_cross_entropy {} }");
  }
  const uint32_t num_class = model.num_class();
  for (int i = 0; i < model.losses_size(); ++i) {
    const auto& loss = model.losses(i);
    const std::string lp = item_path(p, "losses", i);
    const std::string name = oneof_set(loss, "loss");
    const std::string sid = oneof_set(loss, "sid_loss");
    if (!sid.empty()) problems->not_supported(lp + "." + sid);
    if (name.empty()) {
      if (sid.empty()) problems->add(lp, "no loss type set (e.g. binary_cross_entropy {})");
      continue;
    }
    const bool binary = name == "binary_cross_entropy" || name == "binary_focal_loss" || name == "l2_loss";
    if (binary && num_class != 1) {
      problems->add(lp + "." + name, fmt::format("needs num_class 1, got model_config.num_class {}; use "
                                                 "softmax_cross_entropy for num_class > 1",
                                                 num_class));
    }
    if (name == "binary_cross_entropy") {
      pred->binary = true;
      const float ls = loss.binary_cross_entropy().label_smoothing();
      if (!(ls >= 0 && ls <= 1)) {
        problems->add(lp + ".binary_cross_entropy.label_smoothing", "must be in [0, 1]");
      }
    } else if (name == "binary_focal_loss") {
      pred->binary = true;
      if (!(loss.binary_focal_loss().gamma() >= 0)) problems->add(lp + ".binary_focal_loss.gamma", "must be >= 0");
      const float alpha = loss.binary_focal_loss().alpha();
      if (!(alpha > 0 && alpha < 1)) problems->add(lp + ".binary_focal_loss.alpha", "must be in (0, 1)");
    } else if (name == "l2_loss") {
      pred->l2 = true;
    } else if (name == "softmax_cross_entropy") {
      pred->softmax = true;
      if (num_class < 2) {
        problems->add(lp + ".softmax_cross_entropy",
                      fmt::format("needs model_config.num_class > 1 (the number of classes), got {}; use "
                                  "binary_cross_entropy for a binary model with num_class 1",
                                  num_class));
      }
      const float ls = loss.softmax_cross_entropy().label_smoothing();
      if (!(ls >= 0 && ls <= 1)) {
        problems->add(lp + ".softmax_cross_entropy.label_smoothing", "must be in [0, 1]");
      }
    } else if (name == "jrc_loss") {
      pred->softmax = true;
      if (num_class != 2) {
        problems->add(lp + ".jrc_loss", fmt::format("needs model_config.num_class 2, got {}", num_class));
      }
      check_feature_key(loss.jrc_loss().session_name(), lp + ".jrc_loss.session_name", features, problems);
      const float alpha = loss.jrc_loss().alpha();
      if (!(alpha >= 0 && alpha <= 1)) problems->add(lp + ".jrc_loss.alpha", "must be in [0, 1]");
    } else {
      problems->not_supported(lp + "." + name);
    }
  }
}

// Outcome of check_common_metric().
enum class MetricCheck { kChecked, kRefused, kOther };

// The checks of the metric types that eval metrics (MetricConfig) and train metrics
// (TrainMetricConfig) share: auc, accuracy, xauc, mean_absolute_error, mean_squared_error
// (kChecked), recall_at_k (reported as not supported: kRefused); any other type: kOther.
template <typename Config>
MetricCheck check_common_metric(const Config& metric, const std::string& name, const std::string& mp,
                                uint32_t num_class, Problems* problems) {
  if (name == "auc") {
    if (metric.auc().thresholds() <= 1) problems->add(mp + ".auc.thresholds", "must be > 1");
  } else if (name == "accuracy") {
    const float t = metric.accuracy().threshold();
    if (!(t >= 0 && t <= 1)) problems->add(mp + ".accuracy.threshold", "must be in [0, 1]");
    const uint32_t k = metric.accuracy().top_k();
    if (num_class > 1 && (k < 1 || k > num_class)) {
      problems->add(mp + ".accuracy.top_k", fmt::format("must be in [1, num_class = {}]", num_class));
    }
  } else if (name == "xauc") {
    const float r = metric.xauc().sample_ratio();
    if (!(r > 0 && r <= 1)) problems->add(mp + ".xauc.sample_ratio", "must be in (0, 1]");
  } else if (name == "recall_at_k") {
    problems->not_supported(mp + ".recall_at_k", "needs a match model's similarity output; rank models have none");
    return MetricCheck::kRefused;
  } else if (name != "mean_absolute_error" && name != "mean_squared_error") {
    return MetricCheck::kOther;
  }
  return MetricCheck::kChecked;
}

void check_metrics(const protos::ModelConfig& model, const Features& features, const Predictions& pred,
                   Problems* problems) {
  const std::string p = "model_config";
  for (int i = 0; i < model.metrics_size(); ++i) {
    const auto& metric = model.metrics(i);
    const std::string mp = item_path(p, "metrics", i);
    const std::string name = oneof_set(metric, "metric");
    if (name.empty()) {
      problems->add(mp, "no metric type set (e.g. auc {})");
      continue;
    }
    const MetricCheck common = check_common_metric(metric, name, mp, model.num_class(), problems);
    if (common == MetricCheck::kRefused) continue;
    if (common == MetricCheck::kOther) {
      if (name == "multiclass_auc") {
        if (metric.multiclass_auc().thresholds() == 1) {
          problems->add(mp + ".multiclass_auc.thresholds", "must be > 1 (or 0 for the exact AUC)");
        }
        const std::string& avg = metric.multiclass_auc().average();
        if (avg != "macro" && avg != "weighted") {
          problems->add(mp + ".multiclass_auc.average", "must be \"macro\" or \"weighted\", got \"" + avg + "\"");
        }
      } else if (name == "normalized_entropy") {
        const float eta = metric.normalized_entropy().eta();
        if (!(eta >= 0 && eta < 0.5)) problems->add(mp + ".normalized_entropy.eta", "must be in [0, 0.5)");
      } else if (name == "grouped_auc") {
        check_feature_key(metric.grouped_auc().grouping_key(), mp + ".grouped_auc.grouping_key", features, problems);
      } else if (name == "grouped_xauc") {
        check_feature_key(metric.grouped_xauc().grouping_key(), mp + ".grouped_xauc.grouping_key", features,
                          problems);
        if (metric.grouped_xauc().max_pairs_per_group() == 0) {
          problems->add(mp + ".grouped_xauc.max_pairs_per_group", "must be > 0");
        }
      } else {
        problems->not_supported(mp + "." + name);
        continue;
      }
    }
    check_metric_input(name, mp + "." + name, pred, model.losses_size() > 0, problems);
  }
}

void check_train_metrics(const protos::ModelConfig& model, const Predictions& pred, Problems* problems) {
  const std::string p = "model_config";
  for (int i = 0; i < model.train_metrics_size(); ++i) {
    const auto& metric = model.train_metrics(i);
    const std::string mp = item_path(p, "train_metrics", i);
    const std::string name = oneof_set(metric, "metric");
    if (!(metric.decay_rate() >= 0 && metric.decay_rate() <= 1)) {
      problems->add(mp + ".decay_rate", "must be in [0, 1]");
    }
    if (metric.decay_step() < 1) problems->add(mp + ".decay_step", "must be >= 1");
    if (name.empty()) {
      problems->add(mp, "no metric type set (e.g. auc {})");
      continue;
    }
    const MetricCheck common = check_common_metric(metric, name, mp, model.num_class(), problems);
    if (common == MetricCheck::kRefused) continue;
    if (common == MetricCheck::kOther) {
      problems->not_supported(mp + "." + name);
      continue;
    }
    check_metric_input(name, mp + "." + name, pred, model.losses_size() > 0, problems);
  }
}

void check_losses_and_metrics(const protos::ModelConfig& model, const Features& features, Problems* problems) {
  Predictions pred;
  pred.num_class = model.num_class();
  check_losses(model, features, &pred, problems);
  check_metrics(model, features, pred, problems);
  check_train_metrics(model, pred, problems);
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
  if (model.num_class() == 0) problems->add(p + ".num_class", "must be >= 1");
  if (model.has_variational_dropout()) {
    const float lambda = model.variational_dropout().regularization_lambda();
    if (!std::isfinite(lambda) || lambda < 0) {
      problems->add(p + ".variational_dropout.regularization_lambda",
                    fmt::format("must be a finite number >= 0, got {}", lambda));
    }
  }
  if (model.use_pareto_loss_weight()) problems->not_supported(p + ".use_pareto_loss_weight");
  check_losses_and_metrics(model, features, problems);
}

}  // namespace tzrec::config::detail
