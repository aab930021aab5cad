// Model train metrics (docs/tzrec-compatibility.md §7.3, TrainMetricConfig): every configured
// metric wrapped in a metrics::TrainMetricWrapper (decay_rate, decay_step), updated once per train
// step on this rank.
#include <memory>
#include <optional>
#include <unordered_set>

#include "base/error.h"
#include "models/metric_types.h"
#include "models/model.h"
#include "models/model_inputs.h"

namespace tzrec::models {

void Model::init_train_metrics() {
  for (size_t t = 0; t < tasks_.size(); ++t) init_task_train_metrics(t);
}

void Model::init_task_train_metrics(size_t t) {
  const ModelTask& task = tasks_[t];
  const int64_t num_class = task.num_class;
  std::unordered_set<std::string> names;
  for (int i = 0; i < task.train_metrics.size(); ++i) {
    const protos::TrainMetricConfig& cfg = task.train_metrics[i];
    const std::string path = fmt::format("{}.train_metrics[{}]", task.path, i);
    const std::string type = detail::oneof_field(cfg, "metric");
    if (type.empty()) throw ConfigError(fmt::format("{}: no metric set; use e.g. auc {{}}", path));
    const double rate = cfg.decay_rate();
    const int64_t step = cfg.decay_step();
    if (!(rate >= 0.0 && rate <= 1.0)) {
      throw ConfigError(fmt::format("{}.decay_rate: must be in [0, 1], got {}", path, rate));
    }
    if (step < 1) throw ConfigError(fmt::format("{}.decay_step: must be >= 1, got {}", path, step));
    std::string input;
    std::string name = type;
    std::optional<metrics::TrainMetricWrapper> wrapper;
    try {
      const MetricType& metric = metric_type(type, path);
      if (!metric.train) throw NotSupportedError(fmt::format("{}.{}", path, type));  // eval-only type
      input = metric_input(task, path, type, metric.input);
      if (metric.train_name) name = metric.train_name(cfg);
      wrapper.emplace(metric.train(cfg, num_class, rate, step));
    } catch (const ConfigError& e) {
      detail::rethrow_metric_error(e, path);
    }
    if (!names.insert(name).second) {
      throw ConfigError(fmt::format("{}: train metric {} is configured twice", path, name));
    }
    train_metrics_.push_back(TrainMetricEntry{t, name + task.suffix, input, std::move(*wrapper)});
  }
}

void Model::update_train_metrics(const TensorMap& predicted, const sparse::Batch& input_batch) {
  if (train_metrics_.empty()) return;
  std::optional<sparse::Batch> storage;
  const sparse::Batch& batch = prediction_rows(predicted, input_batch, &storage);
  const TensorMap predictions = task_predictions(predicted, batch);
  for (TrainMetricEntry& m : train_metrics_) {
    auto it = predictions.find(m.input);
    TORCH_CHECK(it != predictions.end(), "train metric ", m.name, ": predictions have no '", m.input, "'");
    m.metric.update(it->second, metric_label(tasks_[m.task], it->second, batch));
  }
}

std::map<std::string, double> Model::compute_train_metrics() const {
  std::map<std::string, double> out;
  for (const TrainMetricEntry& m : train_metrics_) out[m.name] = m.metric.compute();
  return out;
}

void Model::reset_train_metrics() {
  for (TrainMetricEntry& m : train_metrics_) m.metric.reset();
}

}  // namespace tzrec::models
