// Model eval metrics (docs/tzrec-compatibility.md §7.2): setup from each task's metrics, update,
// compute, cross-rank sync and reset. Every metric object lives in the closures of its MetricEntry.
#include <memory>

#include "base/error.h"
#include "models/metric_types.h"
#include "models/model.h"
#include "models/model_inputs.h"

namespace tzrec::models {

std::string Model::class_metric_input(const ModelTask& task, const std::string& path, const std::string& type,
                                      bool multiclass) const {
  if (task.num_class == 1) {
    if (multiclass) {
      throw ConfigError(fmt::format("{}.{}: needs num_class > 1 and losses {{ softmax_cross_entropy {{}} }}, got "
                                    "num_class 1; use auc for a binary model",
                                    path, type));
    }
    if (!task.has_binary_loss) {
      throw ConfigError(fmt::format("{}.{}: needs prediction 'probs'; add losses {{ binary_cross_entropy {{}} }} "
                                    "or binary_focal_loss",
                                    path, type));
    }
    return "probs" + task.suffix;
  }
  // num_class > 1: every loss is softmax_cross_entropy or jrc_loss (checked in init_losses()).
  if (multiclass) return "probs" + task.suffix;
  if (task.num_class == 2) return "probs1" + task.suffix;
  throw ConfigError(fmt::format("{}.{}: needs a binary prediction (num_class 1 or 2), got num_class {}; use "
                                "multiclass_auc or accuracy",
                                path, type, task.num_class));
}

std::string Model::regression_metric_input(const ModelTask& task, const std::string& path,
                                           const std::string& type) const {
  if (!task.has_l2_loss) {
    throw ConfigError(fmt::format("{}.{}: needs the regression prediction 'y'; add losses {{ l2_loss {{}} }}", path,
                                  type));
  }
  return "y" + task.suffix;
}

std::string Model::metric_input(const ModelTask& task, const std::string& path, const std::string& type,
                                MetricInput input) const {
  if (input == MetricInput::kSimilarity) {
    if (!task.match) detail::throw_recall_at_k_not_supported(path);
    return "similarity" + task.suffix;
  }
  if (task.match) {
    throw ConfigError(fmt::format("{}.{}: a match model has only its user-item similarities to evaluate; use "
                                  "recall_at_k {{ top_k: 5 }} (as in TorchEasyRec)",
                                  path, type));
  }
  switch (input) {
    case MetricInput::kBinary: return class_metric_input(task, path, type, /*multiclass=*/false);
    case MetricInput::kClasses: return class_metric_input(task, path, type, /*multiclass=*/true);
    case MetricInput::kAccuracy: return class_metric_input(task, path, type, task.num_class > 1);
    case MetricInput::kRegression: return regression_metric_input(task, path, type);
    case MetricInput::kSimilarity: break;
  }
  TORCH_CHECK(false, "unknown MetricInput");
}

void Model::init_metrics() {
  for (size_t t = 0; t < tasks_.size(); ++t) {
    const ModelTask& task = tasks_[t];
    if (task.training_only) continue;  // not predicted in evaluation
    for (int i = 0; i < task.metrics.size(); ++i) {
      const protos::MetricConfig& cfg = task.metrics[i];
      const std::string path = fmt::format("{}.metrics[{}]", task.path, i);
      const std::string type = detail::oneof_field(cfg, "metric");
      if (type.empty()) throw ConfigError(fmt::format("{}: no metric set; use e.g. auc {{}}", path));
      add_metric(t, cfg, path, type);
    }
  }
  for (const LossEntry& l : losses_) {
    if (!tasks_[l.task].training_only) loss_metrics_.emplace_back(l.name, metrics::MeanMetric());
  }
}

void Model::add_metric(size_t task_index, const protos::MetricConfig& cfg, const std::string& path,
                       const std::string& type) {
  const ModelTask& task = tasks_[task_index];
  MetricEntry m;
  m.task = task_index;
  try {
    const MetricType& metric = metric_type(type, path);
    m.name = (metric.eval_name ? metric.eval_name(cfg) : type) + task.suffix;  // the result key
    m.input = metric_input(task, path, type, metric.input);
    EvalMetricParts parts = metric.eval(cfg, m.name, task.num_class);
    m.update = std::move(parts.update);
    m.compute = std::move(parts.compute);
    m.reset = std::move(parts.reset);
    m.sync = std::move(parts.sync);
    if (!parts.feature_key.empty()) feature_keys_.push_back({path + "." + parts.feature_key_field, parts.feature_key});
  } catch (const ConfigError& e) {
    detail::rethrow_metric_error(e, path);
  }
  // Several metrics of one type are fine when their results are named apart (recall@1, recall@5).
  for (const MetricEntry& other : metrics_) {
    if (other.name == m.name) throw ConfigError(fmt::format("{}: metric {} is configured twice", path, m.name));
  }
  metrics_.push_back(std::move(m));
}

void Model::update_metrics(const TensorMap& predicted, const sparse::Batch& input_batch, const TensorMap& losses) {
  std::optional<sparse::Batch> storage;
  const sparse::Batch& batch = prediction_rows(predicted, input_batch, &storage);
  const TensorMap predictions = metrics_.empty() ? TensorMap() : task_predictions(predicted, batch);
  for (MetricEntry& m : metrics_) {
    auto it = predictions.find(m.input);
    TORCH_CHECK(it != predictions.end(), "metric ", m.name, ": predictions have no '", m.input, "'");
    m.update(it->second, metric_label(tasks_[m.task], it->second, batch), batch);
  }
  if (losses.empty()) return;
  const double batch_size = static_cast<double>(task_label(tasks_.front(), batch).size(0));
  for (auto& [name, metric] : loss_metrics_) {
    auto it = losses.find(name);
    TORCH_CHECK(it != losses.end(), "update_metrics: losses have no '", name, "'");
    metric.update(it->second.detach().item<double>(), batch_size);
  }
}

std::map<std::string, double> Model::compute_metrics() {
  std::map<std::string, double> out;
  for (const MetricEntry& m : metrics_) m.compute(&out);
  for (const auto& [name, metric] : loss_metrics_) out[name] = metric.compute();
  return out;
}

void Model::sync_metrics(dist::ProcessGroup& pg) {
  // Same order on every rank: the metrics and losses come from the same config.
  for (MetricEntry& m : metrics_) m.sync(pg);
  for (auto& entry : loss_metrics_) entry.second.sync(pg);
}

void Model::reset_metrics() {
  for (MetricEntry& m : metrics_) m.reset();
  for (auto& entry : loss_metrics_) entry.second.reset();
}

}  // namespace tzrec::models
