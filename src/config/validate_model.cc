// validate(): model_config checks (feature groups, model, losses, metrics, MLPs).
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "base/error.h"
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

  if (!deepfm.has_deep()) problems->add(p + ".deep", "required");
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
    if (!tower.has_mlp()) problems->add(tp + ".mlp", "required");
  }
  if (!mt.has_final()) problems->add(p + ".final", "required");
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

// The losses, metrics and num_class of one task: model_config itself for single-task models, a
// task tower for multi-task models.
struct TaskView {
  std::string path;  // "model_config" or "model_config.mmoe.task_towers[i]"
  uint32_t num_class = 1;
  const google::protobuf::RepeatedPtrField<protos::LossConfig>* losses = nullptr;
  const google::protobuf::RepeatedPtrField<protos::MetricConfig>* metrics = nullptr;
  const google::protobuf::RepeatedPtrField<protos::TrainMetricConfig>* train_metrics = nullptr;
};

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

void check_losses(const TaskView& task, const Features& features, Predictions* pred, Problems* problems) {
  const std::string& p = task.path;
  if (task.losses->empty()) {
    problems->add(p + ".losses", "needs at least one loss, e.g. losses { binary_cross_entropy {} }");
  }
  const uint32_t num_class = task.num_class;
  const std::string nc = p + ".num_class";
  for (int i = 0; i < task.losses->size(); ++i) {
    const auto& loss = (*task.losses)[i];
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
      problems->add(lp + "." + name, fmt::format("needs num_class 1, got {} {}; use "
                                                 "softmax_cross_entropy for num_class > 1",
                                                 nc, num_class));
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
                      fmt::format("needs {} > 1 (the number of classes), got {}; use "
                                  "binary_cross_entropy for a binary model with num_class 1",
                                  nc, num_class));
      }
      const float ls = loss.softmax_cross_entropy().label_smoothing();
      if (!(ls >= 0 && ls <= 1)) {
        problems->add(lp + ".softmax_cross_entropy.label_smoothing", "must be in [0, 1]");
      }
    } else if (name == "jrc_loss") {
      pred->softmax = true;
      if (num_class != 2) {
        problems->add(lp + ".jrc_loss", fmt::format("needs {} 2, got {}", nc, num_class));
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

void check_metrics(const TaskView& task, const Features& features, const Predictions& pred, Problems* problems) {
  const std::string& p = task.path;
  for (int i = 0; i < task.metrics->size(); ++i) {
    const auto& metric = (*task.metrics)[i];
    const std::string mp = item_path(p, "metrics", i);
    const std::string name = oneof_set(metric, "metric");
    if (name.empty()) {
      problems->add(mp, "no metric type set (e.g. auc {})");
      continue;
    }
    const MetricCheck common = check_common_metric(metric, name, mp, task.num_class, problems);
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
    check_metric_input(name, mp + "." + name, pred, !task.losses->empty(), problems);
  }
}

void check_train_metrics(const TaskView& task, const Predictions& pred, Problems* problems) {
  const std::string& p = task.path;
  for (int i = 0; i < task.train_metrics->size(); ++i) {
    const auto& metric = (*task.train_metrics)[i];
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
    const MetricCheck common = check_common_metric(metric, name, mp, task.num_class, problems);
    if (common == MetricCheck::kRefused) continue;
    if (common == MetricCheck::kOther) {
      problems->not_supported(mp + "." + name);
      continue;
    }
    check_metric_input(name, mp + "." + name, pred, !task.losses->empty(), problems);
  }
}

void check_task(const TaskView& task, const Features& features, Problems* problems) {
  Predictions pred;
  pred.num_class = task.num_class;
  check_losses(task, features, &pred, problems);
  check_metrics(task, features, pred, problems);
  check_train_metrics(task, pred, problems);
}

bool contains(const google::protobuf::RepeatedPtrField<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Every task tower of a multi-task model: name, labels, weights, MLP, losses and metrics; the
// Pareto lower bounds when use_pareto_loss_weight is set. Tower: protos::TaskTower or
// protos::BayesTaskTower (labels_by_order: a missing label_name means the label field at the
// tower's position).
template <class Tower>
void check_task_towers(const google::protobuf::RepeatedPtrField<Tower>& towers, const std::string& p,
                       const protos::EasyRecConfig& config, const Features& features, bool labels_by_order,
                       Problems* problems) {
  if (towers.empty()) {
    problems->add(p, "needs at least one task tower, e.g. task_towers { tower_name: \"ctr\" "
                     "label_name: \"clk\" losses { binary_cross_entropy {} } }");
  }
  const auto& data = config.data_config();
  std::map<std::string, int> names;
  double pareto_sum = 0.0;
  for (int i = 0; i < towers.size(); ++i) {
    const auto& tower = towers[i];
    const std::string tp = fmt::format("{}[{}]", p, i);
    if (tower.tower_name().empty()) {
      problems->add(tp + ".tower_name", "required (it names the task's predictions and metrics)");
    } else if (auto [it, inserted] = names.emplace(tower.tower_name(), i); !inserted) {
      problems->add(tp + ".tower_name", fmt::format("'{}' is also the name of {}[{}]", tower.tower_name(), p,
                                                    it->second));
    }
    if (tower.has_label_name() && !tower.label_name().empty()) {
      if (!contains(data.label_fields(), tower.label_name())) {
        problems->add(tp + ".label_name", "'" + tower.label_name() + "' is not one of data_config.label_fields");
      }
    } else if (!labels_by_order || i >= data.label_fields_size()) {
      problems->add(tp + ".label_name", labels_by_order
                                            ? "required: data_config.label_fields has no field at this tower's "
                                              "position to default to"
                                            : "required; name one of data_config.label_fields");
    }
    if (tower.has_task_space_indicator_label() && !contains(data.label_fields(), tower.task_space_indicator_label())) {
      problems->add(tp + ".task_space_indicator_label",
                    "'" + tower.task_space_indicator_label() + "' is not one of data_config.label_fields");
    }
    if (tower.has_sample_weight_name() && !contains(data.sample_weight_fields(), tower.sample_weight_name())) {
      problems->add(tp + ".sample_weight_name",
                    "'" + tower.sample_weight_name() + "' is not one of data_config.sample_weight_fields");
    }
    if (tower.num_class() == 0) problems->add(tp + ".num_class", "must be >= 1");
    const float c = tower.pareto_min_loss_weight();
    if (!std::isfinite(c) || c < 0) problems->add(tp + ".pareto_min_loss_weight", "must be a finite number >= 0");
    pareto_sum += static_cast<double>(c) * tower.losses_size();
    check_task(TaskView{tp, tower.num_class(), &tower.losses(), &tower.metrics(), &tower.train_metrics()}, features,
               problems);
  }
  if (config.model_config().use_pareto_loss_weight() && !(pareto_sum < 1.0)) {
    problems->add("model_config.use_pareto_loss_weight",
                  fmt::format("the task towers' pareto_min_loss_weight sum to {} over their losses; they must sum "
                              "to less than 1",
                              pareto_sum));
  }
}

// MMoE-style experts (expert_mlp, gate_mlp, num_expert) of mmoe and dbmtl.
template <class Model>
void check_experts(const Model& m, const std::string& p, Problems* problems) {
  if (m.num_expert() == 0) problems->add(p + ".num_expert", "must be >= 1");
}

void check_mmoe(const protos::EasyRecConfig& config, const Features& features, Problems* problems) {
  const auto& model = config.model_config();
  const auto& mmoe = model.mmoe();
  const std::string p = "model_config.mmoe";
  if (model.feature_groups_size() == 0) problems->add("model_config.feature_groups", "MMoE needs a feature group");
  if (!mmoe.has_expert_mlp()) problems->add(p + ".expert_mlp", "required");
  check_experts(mmoe, p, problems);
  check_task_towers(mmoe.task_towers(), p + ".task_towers", config, features, false, problems);
}

void check_ple(const protos::EasyRecConfig& config, const Features& features, Problems* problems) {
  const auto& model = config.model_config();
  const auto& ple = model.ple();
  const std::string p = "model_config.ple";
  if (model.feature_groups_size() == 0) problems->add("model_config.feature_groups", "PLE needs a feature group");
  if (ple.extraction_networks_size() == 0) problems->add(p + ".extraction_networks", "needs at least one network");
  for (int l = 0; l < ple.extraction_networks_size(); ++l) {
    const auto& net = ple.extraction_networks(l);
    const std::string np = item_path(p, "extraction_networks", l);
    if (net.expert_num_per_task() == 0) problems->add(np + ".expert_num_per_task", "must be >= 1");
    if (net.share_num() == 0) problems->not_supported(np + ".share_num", "0 (PLE without shared experts)");
    if (!net.has_share_expert_net()) {
      problems->add(np + ".share_expert_net", "required");
      continue;
    }
    const auto& task_units = net.task_expert_net().hidden_units();
    const auto& share_units = net.share_expert_net().hidden_units();
    if (!task_units.empty() && !share_units.empty() && task_units[task_units.size() - 1] != share_units[share_units.size() - 1]) {
      problems->add(np, "share_expert_net and task_expert_net must end in the same width (the gates mix them)");
    }
  }
  check_task_towers(ple.task_towers(), p + ".task_towers", config, features, false, problems);
}

void check_dbmtl(const protos::EasyRecConfig& config, const Features& features, Problems* problems) {
  const auto& model = config.model_config();
  const auto& dbmtl = model.dbmtl();
  const std::string p = "model_config.dbmtl";
  if (model.feature_groups_size() == 0) problems->add("model_config.feature_groups", "DBMTL needs a feature group");
  if (dbmtl.has_mask_net()) validate_mask_net_module(dbmtl.mask_net(), p + ".mask_net", problems);
  check_experts(dbmtl, p, problems);
  check_task_towers(dbmtl.task_towers(), p + ".task_towers", config, features, true, problems);
  // A relation MLP reads towers listed before its own.
  for (int i = 0; i < dbmtl.task_towers_size(); ++i) {
    const auto& tower = dbmtl.task_towers(i);
    const std::string tp = fmt::format("{}.task_towers[{}]", p, i);
    if (!tower.has_relation_mlp()) continue;
    for (int r = 0; r < tower.relation_tower_names_size(); ++r) {
      const std::string& other = tower.relation_tower_names(r);
      int j = 0;
      while (j < i && dbmtl.task_towers(j).tower_name() != other) ++j;
      if (j == i) {
        problems->add(item_path(tp, "relation_tower_names", r),
                      "'" + other + "' is not a tower before this one; a tower can only depend on towers listed "
                                    "earlier in task_towers");
      }
    }
  }
}

}  // namespace

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
  } else if (name == "wide_and_deep") {
    validate_wide_and_deep(model, problems);
  } else if (name == "dcn_v1") {
    validate_dcn_v1(model, problems);
  } else if (name == "dcn_v2") {
    validate_dcn_v2(model, problems);
  } else if (name == "dlrm") {
    validate_dlrm(config, problems);
  } else if (name == "xdeepfm") {
    validate_xdeepfm(model, problems);
  } else if (name == "mask_net") {
    validate_mask_net(model, problems);
  } else if (name == "mmoe") {
    check_mmoe(config, features, problems);
  } else if (name == "dbmtl") {
    check_dbmtl(config, features, problems);
  } else if (name == "ple") {
    check_ple(config, features, problems);
  } else {
    return;  // a model this build does not have: refused by the field registry; the rest depends on it
  }
  if (model.num_class() == 0) problems->add(p + ".num_class", "must be >= 1");
  if (model.has_variational_dropout()) {
    const float lambda = model.variational_dropout().regularization_lambda();
    if (!std::isfinite(lambda) || lambda < 0) {
      problems->add(p + ".variational_dropout.regularization_lambda",
                    fmt::format("must be a finite number >= 0, got {}", lambda));
    }
  }
  if (name == "mmoe" || name == "dbmtl" || name == "ple") return;  // task towers checked above
  if (model.use_pareto_loss_weight()) {
    problems->add(p + ".use_pareto_loss_weight",
                  "weights the losses of several tasks; use a multi-task model such as mmoe with task_towers");
  }
  check_task(TaskView{p, model.num_class(), &model.losses(), &model.metrics(), &model.train_metrics()}, features,
             problems);
}

}  // namespace tzrec::config::detail
