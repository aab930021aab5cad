#include "models/model_tasks.h"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::models {
namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

ModelTask tower_task(const protos::TaskTower& tower, const std::string& path, const std::vector<std::string>& labels,
                     const std::vector<std::string>& sample_weights) {
  ModelTask task;
  task.tower = tower.tower_name();
  task.suffix = "_" + tower.tower_name();
  task.path = path;
  task.label_name = tower.label_name();
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
  task.weighted = tower.has_sample_weight_name() || tower.has_weight() || tower.has_task_space_indicator_label();
  task.sample_weight_name = tower.sample_weight_name();
  if (tower.has_sample_weight_name() && !contains(sample_weights, task.sample_weight_name)) {
    throw ConfigError(fmt::format(
        "{}.sample_weight_name: '{}' is not one of data_config.sample_weight_fields [{}]; add it there", path,
        task.sample_weight_name, fmt::join(sample_weights, ", ")));
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
  return model_config.model_case() == protos::ModelConfig::kMmoe;
}

std::vector<ModelTask> model_tasks(const protos::ModelConfig& model_config, const std::vector<std::string>& labels,
                                   const std::vector<std::string>& sample_weights) {
  std::vector<ModelTask> tasks;
  if (!is_multi_task(model_config)) {
    if (labels.empty() || labels[0].empty()) {
      throw ConfigError("data_config.label_fields: a rank model needs at least one label field");
    }
    ModelTask task;
    task.path = "model_config";
    task.label_name = labels[0];
    task.num_class = model_config.num_class();
    if (task.num_class < 1) throw ConfigError("model_config.num_class: must be >= 1, got 0");
    task.losses = model_config.losses();
    task.metrics = model_config.metrics();
    task.train_metrics = model_config.train_metrics();
    if (!sample_weights.empty()) task.sample_weight_name = sample_weights[0];
    tasks.push_back(std::move(task));
    return tasks;
  }
  const std::string path = "model_config.mmoe.task_towers";
  const auto& towers = model_config.mmoe().task_towers();
  if (towers.empty()) {
    throw ConfigError(path + ": a multi-task model needs at least one task tower, e.g. task_towers { tower_name: "
                             "\"ctr\" label_name: \"clk\" losses { binary_cross_entropy {} } }");
  }
  std::unordered_set<std::string> names;
  for (int i = 0; i < towers.size(); ++i) {
    const std::string tp = fmt::format("{}[{}]", path, i);
    const std::string& name = towers[i].tower_name();
    if (name.empty()) throw ConfigError(tp + ".tower_name: required (it names the task's predictions and metrics)");
    if (!names.insert(name).second) {
      throw ConfigError(fmt::format("{}.tower_name: '{}' is used by another tower; tower names must be unique", tp,
                                    name));
    }
    tasks.push_back(tower_task(towers[i], tp, labels, sample_weights));
  }
  return tasks;
}

}  // namespace tzrec::models
