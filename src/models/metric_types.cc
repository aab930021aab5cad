#include "models/metric_types.h"

#include <memory>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"
#include "metrics/auc.h"
#include "metrics/binary_accuracy.h"
#include "metrics/grouped_auc.h"
#include "metrics/multiclass_accuracy.h"
#include "metrics/multiclass_auc.h"
#include "metrics/normalized_entropy.h"
#include "metrics/recall_at_k.h"
#include "metrics/regression_metrics.h"
#include "metrics/xauc.h"
#include "models/model_inputs.h"

namespace tzrec::models {
namespace {

// compute / reset / sync of a metric with compute(), reset() and sync(pg); no update.
template <class M>
EvalMetricParts state_parts(const std::shared_ptr<M>& metric, const std::string& name) {
  EvalMetricParts parts;
  parts.compute = [metric, name](std::map<std::string, double>* out) { (*out)[name] = metric->compute(); };
  parts.reset = [metric] { metric->reset(); };
  parts.sync = [metric](dist::ProcessGroup& pg) { metric->sync(pg); };
  return parts;
}

// All closures of a metric that also has update(pred, label).
template <class M>
EvalMetricParts plain_parts(const std::shared_ptr<M>& metric, const std::string& name) {
  EvalMetricParts parts = state_parts(metric, name);
  parts.update = [metric](const torch::Tensor& p, const torch::Tensor& y, const sparse::Batch&) {
    metric->update(p, y);
  };
  return parts;
}

// Per-row group ids from the first id of `key` (a row without ids is group 0, logged once).
std::function<torch::Tensor(const sparse::Batch&)> group_reader(const std::string& metric, const std::string& key) {
  if (key.empty()) {
    throw ConfigError(fmt::format("{}.grouping_key: must name a sparse feature, e.g. a user id", metric));
  }
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

// All closures of a metric updated with (pred, label, group ids of the batch's rows).
template <class M>
EvalMetricParts grouped_parts(const std::shared_ptr<M>& metric,
                              const std::function<torch::Tensor(const sparse::Batch&)>& groups,
                              const std::string& name) {
  EvalMetricParts parts = state_parts(metric, name);
  parts.update = [metric, groups](const torch::Tensor& p, const torch::Tensor& y, const sparse::Batch& batch) {
    metric->update(p, y, groups(batch));
  };
  return parts;
}

std::shared_ptr<metrics::RecallAtK> recall_at_k(const protos::RecallAtK& cfg) {
  return std::make_shared<metrics::RecallAtK>(static_cast<int64_t>(cfg.top_k()));
}

std::string recall_name(const protos::RecallAtK& cfg) { return fmt::format("recall@{}", cfg.top_k()); }

int64_t auc_thresholds(const protos::AUC& auc) {
  const int64_t thresholds = auc.thresholds();
  if (thresholds < 2) throw ConfigError(fmt::format("auc.thresholds: must be >= 2, got {}", thresholds));
  return thresholds;
}

// accuracy: top-k over classes with num_class > 1, else thresholded binary accuracy.
metrics::BufferedMetric accuracy(const protos::Accuracy& cfg, int64_t num_class) {
  if (num_class > 1) {
    return metrics::make_buffered_metric(std::make_shared<metrics::MulticlassAccuracy>(num_class, cfg.top_k()));
  }
  return metrics::make_buffered_metric(std::make_shared<metrics::BinaryAccuracy>(cfg.threshold()));
}

std::shared_ptr<metrics::RegressionError> regression_error(bool absolute) {
  return std::make_shared<metrics::RegressionError>(absolute ? metrics::RegressionError::Kind::kAbsolute
                                                             : metrics::RegressionError::Kind::kSquared);
}

std::shared_ptr<metrics::XAuc> xauc(const protos::XAUC& cfg) {
  metrics::XAucOptions opts;
  opts.sample_ratio = cfg.sample_ratio();
  opts.max_pairs = cfg.max_pairs();
  opts.in_batch = cfg.in_batch();
  return std::make_shared<metrics::XAuc>(opts);
}

const std::map<std::string, MetricType>& registry() {
  static const std::map<std::string, MetricType> types = [] {
    std::map<std::string, MetricType> t;
    t["auc"] = {MetricInput::kBinary,
                [](const protos::MetricConfig& cfg, const std::string& name, int64_t) {
                  auto auc = std::make_shared<metrics::Auc>(auc_thresholds(cfg.auc()));
                  EvalMetricParts parts = plain_parts(auc, name);
                  // An explicit thresholds also reports TorchEasyRec's binned value.
                  const bool binned = cfg.auc().has_thresholds();
                  parts.compute = [auc, binned, name](std::map<std::string, double>* out) {
                    (*out)[name] = auc->compute();
                    if (binned) (*out)["auc_binned" + name.substr(3)] = auc->compute_binned();
                  };
                  return parts;
                },
                [](const protos::TrainMetricConfig& cfg, int64_t, double rate, int64_t step) {
                  return metrics::TrainMetricWrapper::decay_auc(auc_thresholds(cfg.auc()), rate, step);
                }};
    t["multiclass_auc"] = {MetricInput::kClasses,
                           [](const protos::MetricConfig& cfg, const std::string& name, int64_t num_class) {
                             const std::string& average = cfg.multiclass_auc().average();
                             if (average != "macro" && average != "weighted") {
                               throw ConfigError(fmt::format(
                                   "multiclass_auc.average: must be \"macro\" or \"weighted\", got \"{}\"", average));
                             }
                             return plain_parts(std::make_shared<metrics::MulticlassAuc>(
                                                    num_class, cfg.multiclass_auc().thresholds(),
                                                    metrics::parse_auc_average(average)),
                                                name);
                           },
                           nullptr};
    for (const bool absolute : {true, false}) {
      t[absolute ? "mean_absolute_error" : "mean_squared_error"] = {
          MetricInput::kRegression,
          [absolute](const protos::MetricConfig&, const std::string& name, int64_t) {
            return plain_parts(regression_error(absolute), name);
          },
          [absolute](const protos::TrainMetricConfig&, int64_t, double rate, int64_t step) {
            return metrics::TrainMetricWrapper(metrics::make_buffered_metric(regression_error(absolute)), rate, step);
          }};
    }
    t["accuracy"] = {MetricInput::kAccuracy,
                     [](const protos::MetricConfig& cfg, const std::string& name, int64_t num_class) {
                       if (num_class > 1) {
                         return plain_parts(
                             std::make_shared<metrics::MulticlassAccuracy>(num_class, cfg.accuracy().top_k()), name);
                       }
                       return plain_parts(std::make_shared<metrics::BinaryAccuracy>(cfg.accuracy().threshold()), name);
                     },
                     [](const protos::TrainMetricConfig& cfg, int64_t num_class, double rate, int64_t step) {
                       return metrics::TrainMetricWrapper(accuracy(cfg.accuracy(), num_class), rate, step);
                     }};
    t["normalized_entropy"] = {MetricInput::kBinary,
                               [](const protos::MetricConfig& cfg, const std::string& name, int64_t) {
                                 return plain_parts(
                                     std::make_shared<metrics::NormalizedEntropy>(cfg.normalized_entropy().eta()),
                                     name);
                               },
                               nullptr};
    t["grouped_auc"] = {MetricInput::kBinary,
                        [](const protos::MetricConfig& cfg, const std::string& name, int64_t) {
                          auto groups = group_reader("grouped_auc", cfg.grouped_auc().grouping_key());
                          EvalMetricParts parts = grouped_parts(std::make_shared<metrics::GroupedAuc>(), groups, name);
                          parts.feature_key = cfg.grouped_auc().grouping_key();
                          parts.feature_key_field = "grouped_auc.grouping_key";
                          return parts;
                        },
                        nullptr};
    t["xauc"] = {MetricInput::kRegression,
                 [](const protos::MetricConfig& cfg, const std::string& name, int64_t) {
                   return plain_parts(xauc(cfg.xauc()), name);
                 },
                 [](const protos::TrainMetricConfig& cfg, int64_t, double rate, int64_t step) {
                   return metrics::TrainMetricWrapper(metrics::make_buffered_metric(xauc(cfg.xauc())), rate, step);
                 }};
    t["grouped_xauc"] = {MetricInput::kRegression,
                         [](const protos::MetricConfig& cfg, const std::string& name, int64_t) {
                           auto groups = group_reader("grouped_xauc", cfg.grouped_xauc().grouping_key());
                           if (cfg.grouped_xauc().max_pairs_per_group() == 0) {
                             throw ConfigError("grouped_xauc.max_pairs_per_group: must be > 0");
                           }
                           EvalMetricParts parts = grouped_parts(
                               std::make_shared<metrics::GroupedXAuc>(cfg.grouped_xauc().max_pairs_per_group()), groups,
                               name);
                           parts.feature_key = cfg.grouped_xauc().grouping_key();
                           parts.feature_key_field = "grouped_xauc.grouping_key";
                           return parts;
                         },
                         nullptr};
    t["recall_at_k"] = {MetricInput::kSimilarity,
                        [](const protos::MetricConfig& cfg, const std::string& name, int64_t) {
                          return plain_parts(recall_at_k(cfg.recall_at_k()), name);
                        },
                        [](const protos::TrainMetricConfig& cfg, int64_t, double rate, int64_t step) {
                          return metrics::TrainMetricWrapper(
                              metrics::make_buffered_metric(recall_at_k(cfg.recall_at_k())), rate, step);
                        },
                        [](const protos::MetricConfig& cfg) { return recall_name(cfg.recall_at_k()); },
                        [](const protos::TrainMetricConfig& cfg) { return recall_name(cfg.recall_at_k()); }};
    return t;
  }();
  return types;
}

}  // namespace

const MetricType& metric_type(const std::string& name, const std::string& path) {
  const auto& types = registry();
  auto it = types.find(name);
  if (it != types.end()) return it->second;
  throw NotSupportedError(fmt::format("{}.{}", path, name));
}

}  // namespace tzrec::models
