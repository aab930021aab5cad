// The metric types of eval metrics (MetricConfig) and train metrics (TrainMetricConfig), listed
// once (docs/tzrec-compatibility.md §7.2, §7.3): the prediction each reads and how it is built from
// its config. Model::add_metric and Model::init_task_train_metrics build every metric from here.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "dist/process_group.h"
#include "metrics/decay_metric.h"
#include "sparse/batch.h"
#include "tzrec/protos/metric.pb.h"

namespace tzrec::models {

// The prediction a metric reads.
enum class MetricInput {
  kBinary,      // "probs" (num_class 1) or "probs1" (num_class 2)
  kClasses,     // "probs" over num_class > 1 classes
  kAccuracy,    // kClasses with num_class > 1, else kBinary
  kRegression,  // "y" (needs l2_loss)
  kSimilarity,  // a match model's "similarity" [B, N]; the label passed is the bool target [B, N]
};

// The closures of one eval metric; they own the metric object (metrics/*.h).
struct EvalMetricParts {
  std::function<void(const torch::Tensor& pred, const torch::Tensor& label, const sparse::Batch& batch)> update;
  std::function<void(std::map<std::string, double>* out)> compute;  // writes its result key(s)
  std::function<void()> reset;
  std::function<void(dist::ProcessGroup& pg)> sync;  // merges the state of every rank
  // The feature the metric reads by name (grouping_key) and its field relative to the metric's
  // config ("grouped_auc.grouping_key"); empty for metrics that read none.
  std::string feature_key;
  std::string feature_key_field;
};

struct MetricType {
  MetricInput input;
  // The eval metric with result key `name`; ConfigError "<field>: <message>" with the field
  // relative to the metric's config (e.g. "auc.thresholds: must be >= 2, got 1").
  std::function<EvalMetricParts(const protos::MetricConfig& cfg, const std::string& name, int64_t num_class)> eval;
  // The decayed train metric; empty when the type is an eval metric only.
  std::function<metrics::TrainMetricWrapper(const protos::TrainMetricConfig& cfg, int64_t num_class, double decay_rate,
                                            int64_t decay_step)>
      train;
  // The result key of a metric of this type when it differs from the type name ("recall@5" for
  // recall_at_k with top_k 5, as TorchEasyRec names it); empty: the type name.
  std::function<std::string(const protos::MetricConfig& cfg)> eval_name = {};
  std::function<std::string(const protos::TrainMetricConfig& cfg)> train_name = {};
};

// The type of metric oneof member `name` ("auc", "grouped_xauc", ...); throws NotSupportedError
// naming `path`.<name> when this build has none.
const MetricType& metric_type(const std::string& name, const std::string& path);

}  // namespace tzrec::models
