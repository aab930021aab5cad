// Model eval metrics (docs/tzrec-compatibility.md §7.2): setup from each task's metrics, update,
// compute, cross-rank sync and reset. Every metric object lives in the closures of its MetricEntry.
#include <memory>
#include <unordered_set>

#include "base/error.h"
#include "base/logging.h"
#include "metrics/auc.h"
#include "metrics/binary_accuracy.h"
#include "metrics/grouped_auc.h"
#include "metrics/multiclass_accuracy.h"
#include "metrics/multiclass_auc.h"
#include "metrics/normalized_entropy.h"
#include "metrics/regression_metrics.h"
#include "metrics/xauc.h"
#include "models/model.h"
#include "models/model_inputs.h"

namespace tzrec::models {
namespace {

// compute / reset / sync closures of a metric with compute(), reset() and sync(pg).
template <class M>
void wire_state(const std::shared_ptr<M>& metric, const std::string& name,
                std::function<void(std::map<std::string, double>*)>* compute, std::function<void()>* reset,
                std::function<void(dist::ProcessGroup&)>* sync) {
  *compute = [metric, name](std::map<std::string, double>* out) { (*out)[name] = metric->compute(); };
  *reset = [metric] { metric->reset(); };
  *sync = [metric](dist::ProcessGroup& pg) { metric->sync(pg); };
}

// All closures of a metric that also has update(pred, label).
template <class M>
void wire_plain(const std::shared_ptr<M>& metric, const std::string& name,
                std::function<void(const torch::Tensor&, const torch::Tensor&, const sparse::Batch&)>* update,
                std::function<void(std::map<std::string, double>*)>* compute, std::function<void()>* reset,
                std::function<void(dist::ProcessGroup&)>* sync) {
  *update = [metric](const torch::Tensor& p, const torch::Tensor& y, const sparse::Batch&) { metric->update(p, y); };
  wire_state(metric, name, compute, reset, sync);
}

// Per-row group ids from the first id of `key` (a row without ids is group 0, logged once).
std::function<torch::Tensor(const sparse::Batch&)> group_reader(const std::string& metric, const std::string& key) {
  auto warned_empty = std::make_shared<bool>(false);
  return [metric, key, warned_empty](const sparse::Batch& batch) {
    bool any_empty = false;
    torch::Tensor group = detail::first_id_per_row(batch, key, metric + ": grouping_key", &any_empty);
    if (any_empty && !*warned_empty) {
      *warned_empty = true;
      log::warning("{}: some rows have no '{}' id; like TorchEasyRec they form group 0", metric, key);
    }
    return group;
  };
}

}  // namespace

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

void Model::init_metrics() {
  for (size_t t = 0; t < tasks_.size(); ++t) {
    const ModelTask& task = tasks_[t];
    std::unordered_set<std::string> names;
    for (int i = 0; i < task.metrics.size(); ++i) {
      const protos::MetricConfig& cfg = task.metrics[i];
      const std::string path = fmt::format("{}.metrics[{}]", task.path, i);
      const std::string type = detail::oneof_field(cfg, "metric");
      if (type.empty()) throw ConfigError(fmt::format("{}: no metric set; use e.g. auc {{}}", path));
      if (!names.insert(type).second) {
        throw ConfigError(fmt::format("{}: metric {} is configured twice", path, type));
      }
      add_metric(t, cfg, path, type);
    }
  }
  for (const LossEntry& l : losses_) loss_metrics_.emplace_back(l.name, metrics::MeanMetric());
}

void Model::add_metric(size_t task_index, const protos::MetricConfig& cfg, const std::string& path,
                       const std::string& type) {
  const ModelTask& task = tasks_[task_index];
  const int64_t num_class = task.num_class;
  const std::string name = type + task.suffix;  // the result key
  MetricEntry m;
  m.task = task_index;
  m.name = name;
  try {
    if (type == "auc") {
      m.input = class_metric_input(task, path, type, false);
      const int64_t thresholds = cfg.auc().thresholds();
      if (thresholds < 2) {
        throw ConfigError(fmt::format("{}.auc.thresholds: must be >= 2, got {}", path, thresholds));
      }
      auto auc = std::make_shared<metrics::Auc>(thresholds);
      const bool binned = cfg.auc().has_thresholds();
      wire_plain(auc, name, &m.update, &m.compute, &m.reset, &m.sync);
      m.compute = [auc, binned, name](std::map<std::string, double>* out) {
        (*out)[name] = auc->compute();
        if (binned) (*out)["auc_binned" + name.substr(3)] = auc->compute_binned();
      };
    } else if (type == "multiclass_auc") {
      m.input = class_metric_input(task, path, type, true);
      const std::string& average = cfg.multiclass_auc().average();
      if (average != "macro" && average != "weighted") {
        throw ConfigError(fmt::format("{}.multiclass_auc.average: must be \"macro\" or \"weighted\", got \"{}\"", path,
                                      average));
      }
      auto auc = std::make_shared<metrics::MulticlassAuc>(num_class, cfg.multiclass_auc().thresholds(),
                                                          metrics::parse_auc_average(average));
      wire_plain(auc, name, &m.update, &m.compute, &m.reset, &m.sync);
    } else if (type == "mean_absolute_error" || type == "mean_squared_error") {
      m.input = regression_metric_input(task, path, type);
      auto err = std::make_shared<metrics::RegressionError>(type == "mean_absolute_error"
                                                                ? metrics::RegressionError::Kind::kAbsolute
                                                                : metrics::RegressionError::Kind::kSquared);
      wire_plain(err, name, &m.update, &m.compute, &m.reset, &m.sync);
    } else if (type == "accuracy") {
      m.input = class_metric_input(task, path, type, num_class > 1);
      if (num_class > 1) {
        auto acc = std::make_shared<metrics::MulticlassAccuracy>(num_class, cfg.accuracy().top_k());
        wire_plain(acc, name, &m.update, &m.compute, &m.reset, &m.sync);
      } else {
        auto acc = std::make_shared<metrics::BinaryAccuracy>(cfg.accuracy().threshold());
        wire_plain(acc, name, &m.update, &m.compute, &m.reset, &m.sync);
      }
    } else if (type == "normalized_entropy") {
      m.input = class_metric_input(task, path, type, false);
      auto ne = std::make_shared<metrics::NormalizedEntropy>(cfg.normalized_entropy().eta());
      wire_plain(ne, name, &m.update, &m.compute, &m.reset, &m.sync);
    } else if (type == "grouped_auc") {
      m.input = class_metric_input(task, path, type, false);
      const std::string key = cfg.grouped_auc().grouping_key();
      if (key.empty()) {
        throw ConfigError(
            fmt::format("{}.grouped_auc.grouping_key: must name a sparse feature, e.g. a user id", path));
      }
      auto gauc = std::make_shared<metrics::GroupedAuc>();
      auto groups = group_reader(type, key);
      wire_state(gauc, name, &m.compute, &m.reset, &m.sync);
      m.update = [gauc, groups](const torch::Tensor& p, const torch::Tensor& y, const sparse::Batch& batch) {
        gauc->update(p, y, groups(batch));
      };
    } else if (type == "xauc") {
      m.input = regression_metric_input(task, path, type);
      metrics::XAucOptions opts;
      opts.sample_ratio = cfg.xauc().sample_ratio();
      opts.max_pairs = cfg.xauc().max_pairs();
      opts.in_batch = cfg.xauc().in_batch();
      auto xauc = std::make_shared<metrics::XAuc>(opts);
      wire_plain(xauc, name, &m.update, &m.compute, &m.reset, &m.sync);
    } else if (type == "grouped_xauc") {
      m.input = regression_metric_input(task, path, type);
      const std::string key = cfg.grouped_xauc().grouping_key();
      if (key.empty()) {
        throw ConfigError(
            fmt::format("{}.grouped_xauc.grouping_key: must name a sparse feature, e.g. a user id", path));
      }
      if (cfg.grouped_xauc().max_pairs_per_group() == 0) {
        throw ConfigError(fmt::format("{}.grouped_xauc.max_pairs_per_group: must be > 0", path));
      }
      auto gx = std::make_shared<metrics::GroupedXAuc>(cfg.grouped_xauc().max_pairs_per_group());
      auto groups = group_reader(type, key);
      wire_state(gx, name, &m.compute, &m.reset, &m.sync);
      m.update = [gx, groups](const torch::Tensor& p, const torch::Tensor& y, const sparse::Batch& batch) {
        gx->update(p, y, groups(batch));
      };
    } else if (type == "recall_at_k") {
      detail::throw_recall_at_k_not_supported(path);
    } else {
      throw NotSupportedError(fmt::format("{}.{}", path, type));
    }
  } catch (const ConfigError& e) {
    detail::rethrow_metric_error(e, path);
  }
  metrics_.push_back(std::move(m));
}

void Model::update_metrics(const TensorMap& predictions, const sparse::Batch& batch, const TensorMap& losses) {
  for (MetricEntry& m : metrics_) {
    auto it = predictions.find(m.input);
    TORCH_CHECK(it != predictions.end(), "metric ", m.name, ": predictions have no '", m.input, "'");
    m.update(it->second, batch_label(batch, tasks_[m.task].label_name), batch);
  }
  if (losses.empty()) return;
  const double batch_size = static_cast<double>(batch_label(batch, tasks_.front().label_name).size(0));
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
