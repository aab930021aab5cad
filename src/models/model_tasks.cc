#include "models/model_tasks.h"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <unordered_set>

#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"

namespace tzrec::models {
namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Tower: protos::TaskTower, BayesTaskTower or InterventionTaskTower (same field names; the last has
// no sample_weight_name). default_label: the label of a tower without label_name ("" = required).
template <class Tower>
ModelTask tower_task(const Tower& tower, const std::string& path, const std::vector<std::string>& labels,
                     const std::vector<std::string>& sample_weights, const std::string& default_label = "") {
  ModelTask task;
  task.tower = tower.tower_name();
  task.suffix = "_" + tower.tower_name();
  task.path = path;
  task.label_name = tower.has_label_name() ? tower.label_name() : default_label;
  task.num_class = tower.num_class();
  task.losses = tower.losses();
  task.metrics = tower.metrics();
  task.train_metrics = tower.train_metrics();
  if (task.label_name.empty()) throw ConfigError(path + ".label_name: required; name one of data_config.label_fields");
  if (!contains(labels, task.label_name)) {
    throw ConfigError(fmt::format("{}.label_name: '{}' is not one of data_config.label_fields [{}]; add it there",
                                  path, task.label_name, fmt::join(labels, ", ")));
  }
  if (task.num_class < 1) throw ConfigError(fmt::format("{}.num_class: must be >= 1, got 0", path));
  task.weighted = tower.has_weight() || tower.has_task_space_indicator_label();
  if constexpr (!std::is_same_v<Tower, protos::InterventionTaskTower>) {
    task.weighted = task.weighted || tower.has_sample_weight_name();
    task.sample_weight_name = tower.sample_weight_name();
    if (tower.has_sample_weight_name() && !contains(sample_weights, task.sample_weight_name)) {
      throw ConfigError(fmt::format(
          "{}.sample_weight_name: '{}' is not one of data_config.sample_weight_fields [{}]; add it there", path,
          task.sample_weight_name, fmt::join(sample_weights, ", ")));
    }
  }
  task.weight = tower.weight();
  task.task_space_indicator_label = tower.task_space_indicator_label();
  if (tower.has_task_space_indicator_label() && !contains(labels, task.task_space_indicator_label)) {
    throw ConfigError(fmt::format(
        "{}.task_space_indicator_label: '{}' is not one of data_config.label_fields [{}]; add it there", path,
        task.task_space_indicator_label, fmt::join(labels, ", ")));
  }
  task.in_task_space_weight = tower.in_task_space_weight();
  task.out_task_space_weight = tower.out_task_space_weight();
  task.pareto_min_loss_weight = tower.pareto_min_loss_weight();
  return task;
}

}  // namespace

bool is_multi_task(const protos::ModelConfig& model_config) {
  return model_config.model_case() == protos::ModelConfig::kMmoe ||
         model_config.model_case() == protos::ModelConfig::kDbmtl ||
         model_config.model_case() == protos::ModelConfig::kPle ||
         model_config.model_case() == protos::ModelConfig::kPepnet ||
         model_config.model_case() == protos::ModelConfig::kDc2Vr ||
         model_config.model_case() == protos::ModelConfig::kDlrmHstu ||
         model_config.model_case() == protos::ModelConfig::kUltraHstu;
}

bool is_match_model(const protos::ModelConfig& model_config) {
  switch (model_config.model_case()) {
    case protos::ModelConfig::kDssm:
    case protos::ModelConfig::kDssmV2:
    case protos::ModelConfig::kDat:
    case protos::ModelConfig::kMind:
    case protos::ModelConfig::kHstuMatch:
      return true;
    default:
      return false;
  }
}

namespace {

template <class Tower>
std::vector<ModelTask> tower_tasks(const google::protobuf::RepeatedPtrField<Tower>& towers, const std::string& path,
                                   const std::vector<std::string>& labels,
                                   const std::vector<std::string>& sample_weights, bool labels_by_order) {
  if (towers.empty()) {
    throw ConfigError(path + ": a multi-task model needs at least one task tower, e.g. task_towers { tower_name: "
                             "\"ctr\" label_name: \"clk\" losses { binary_cross_entropy {} } }");
  }
  std::vector<ModelTask> tasks;
  std::unordered_set<std::string> names;
  for (int i = 0; i < towers.size(); ++i) {
    const std::string tp = fmt::format("{}[{}]", path, i);
    const std::string& name = towers[i].tower_name();
    if (name.empty()) throw ConfigError(tp + ".tower_name: required (it names the task's predictions and metrics)");
    if (!names.insert(name).second) {
      throw ConfigError(fmt::format("{}.tower_name: '{}' is used by another tower; tower names must be unique", tp,
                                    name));
    }
    // BayesTaskTower: label_name defaults to the label field at the tower's position.
    const std::string default_label =
        labels_by_order && static_cast<size_t>(i) < labels.size() ? labels[static_cast<size_t>(i)] : "";
    tasks.push_back(tower_task(towers[i], tp, labels, sample_weights, default_label));
  }
  return tasks;
}

// FusionMTLTower.task_configs (dlrm_hstu, ultra_hstu; TorchEasyRec's DlrmHSTU): one task per
// entry, named by task_name, its label optionally a bit of the label column (task_bitmask).
std::vector<ModelTask> fusion_tasks(const protos::FusionMTLTower& tower, const std::string& path,
                                    const std::vector<std::string>& labels) {
  if (tower.task_configs().empty()) {
    throw ConfigError(path + ".task_configs: at least one task is required, e.g. task_configs { task_name: "
                             "\"is_click\" label_name: \"label\" task_bitmask: 1 losses { binary_cross_entropy {} } }");
  }
  std::vector<ModelTask> tasks;
  std::unordered_set<std::string> names;
  for (int i = 0; i < tower.task_configs_size(); ++i) {
    const protos::FusionSubTaskConfig& cfg = tower.task_configs(i);
    ModelTask task;
    task.path = fmt::format("{}.task_configs[{}]", path, i);
    if (cfg.task_name().empty()) throw ConfigError(task.path + ".task_name: required (it names the task's predictions)");
    if (!names.insert(cfg.task_name()).second) {
      throw ConfigError(fmt::format("{}.task_name: '{}' is used by another task; task names must be unique", task.path,
                                    cfg.task_name()));
    }
    task.tower = cfg.task_name();
    task.suffix = "_" + cfg.task_name();
    task.label_name = cfg.label_name();
    if (!contains(labels, task.label_name)) {
      throw ConfigError(fmt::format("{}.label_name: '{}' is not one of data_config.label_fields [{}]; add it there",
                                    task.path, task.label_name, fmt::join(labels, ", ")));
    }
    task.num_class = cfg.num_class();
    if (task.num_class < 1) throw ConfigError(fmt::format("{}.num_class: must be >= 1, got 0", task.path));
    task.losses = cfg.losses();
    task.metrics = cfg.metrics();
    task.train_metrics = cfg.train_metrics();
    task.weight = cfg.weight();
    task.weighted = cfg.has_weight();
    if (cfg.task_bitmask() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      throw ConfigError(fmt::format("{}.task_bitmask: {} does not fit 63 bits", task.path, cfg.task_bitmask()));
    }
    task.label_bitmask = static_cast<int64_t>(cfg.task_bitmask());
    tasks.push_back(std::move(task));
  }
  return tasks;
}

}  // namespace

std::vector<ModelTask> model_tasks(const protos::ModelConfig& model_config, const std::vector<std::string>& labels,
                                   const std::vector<std::string>& sample_weights) {
  switch (model_config.model_case()) {
    case protos::ModelConfig::kMmoe:
      return tower_tasks(model_config.mmoe().task_towers(), "model_config.mmoe.task_towers", labels, sample_weights,
                         false);
    case protos::ModelConfig::kPle:
      return tower_tasks(model_config.ple().task_towers(), "model_config.ple.task_towers", labels, sample_weights,
                         false);
    case protos::ModelConfig::kPepnet:
      return tower_tasks(model_config.pepnet().task_towers(), "model_config.pepnet.task_towers", labels,
                         sample_weights, false);
    case protos::ModelConfig::kDc2Vr:
      return tower_tasks(model_config.dc2vr().task_towers(), "model_config.dc2vr.task_towers", labels,
                         sample_weights, false);
    case protos::ModelConfig::kDbmtl:
      return tower_tasks(model_config.dbmtl().task_towers(), "model_config.dbmtl.task_towers", labels,
                         sample_weights, true);
    case protos::ModelConfig::kDlrmHstu:
      return fusion_tasks(model_config.dlrm_hstu().fusion_mtl_tower(), "model_config.dlrm_hstu.fusion_mtl_tower",
                          labels);
    case protos::ModelConfig::kUltraHstu:
      return fusion_tasks(model_config.ultra_hstu().fusion_mtl_tower(), "model_config.ultra_hstu.fusion_mtl_tower",
                          labels);
    case protos::ModelConfig::kSidRqvae:
    case protos::ModelConfig::kSidRqkmeans:
      return {};  // no label: the SID models' losses and metrics are their own (models/sid/sid_model.h)
    default:
      break;
  }
  const bool match = is_match_model(model_config);
  if (labels.empty() || labels[0].empty()) {
    throw ConfigError(fmt::format("data_config.label_fields: a {} model needs at least one label field{}",
                                  match ? "match" : "rank",
                                  match ? " (its loss does not read it, but the data must have it, as in TorchEasyRec)"
                                        : ""));
  }
  ModelTask task;
  if (match) {
    // Every match model message has `in_batch_negative`.
    const auto* oneof = model_config.GetDescriptor()->FindOneofByName("model");
    const auto* set = model_config.GetReflection()->GetOneofFieldDescriptor(model_config, oneof);
    const google::protobuf::Message& m = model_config.GetReflection()->GetMessage(model_config, set);
    const auto* field = m.GetDescriptor()->FindFieldByName("in_batch_negative");
    TORCH_CHECK(field != nullptr, "match model ", set->name(), " has no in_batch_negative");
    task.match = true;
    task.in_batch_negative = m.GetReflection()->GetBool(m, field);
  }
  task.path = "model_config";
  task.label_name = labels[0];
  task.num_class = model_config.num_class();
  if (task.num_class < 1) throw ConfigError("model_config.num_class: must be >= 1, got 0");
  task.losses = model_config.losses();
  task.metrics = model_config.metrics();
  task.train_metrics = model_config.train_metrics();
  if (!sample_weights.empty()) task.sample_weight_name = sample_weights[0];
  if (model_config.model_case() == protos::ModelConfig::kRocketLaunching) {
    // tzrec's RocketLaunching: every loss and metric for the booster and the light net.
    ModelTask booster = task, light = std::move(task);
    booster.suffix = "_booster";
    booster.training_only = true;
    light.suffix = "_light";
    return {std::move(booster), std::move(light)};
  }
  return {std::move(task)};
}

}  // namespace tzrec::models
