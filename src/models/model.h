// Model base class with TorchEasyRec RankModel semantics (tzrec/models/rank_model.py, reference §4,
// §7.1, §7.2): predictions, losses, eval metrics and the split of parameters for the optimizers.
//
// Supported config (everything else throws when the model is built); num_class must be 1:
//   losses:  binary_cross_entropy {label_smoothing}, binary_focal_loss {gamma, alpha}
//                → predictions "logits" [B], "probs" [B] = sigmoid(logits)
//            l2_loss → prediction "y" [B] (raw output, no sigmoid)
//   metrics on "probs" (need a binary loss):
//            auc {thresholds}  → "auc" (exact AUC); when `thresholds` is set explicitly also
//            "auc_binned" (torchmetrics BinaryAUROC(thresholds) as tzrec reports it)
//            accuracy {threshold} → "accuracy" (binary; top_k only applies to multiclass)
//            normalized_entropy {eta} → "normalized_entropy"
//            grouped_auc {grouping_key} → "grouped_auc" (group = first id of sparse feature
//            grouping_key in the batch)
//   metrics on "y" (need l2_loss, as in tzrec, which reads predictions["y"]):
//            mean_absolute_error, mean_squared_error
//   each loss is also a metric under its own name: mean of batch losses weighted by batch size.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "dist/process_group.h"
#include "embedding/embedding_config.h"
#include "embedding/embedding_group.h"
#include "feature/feature_info.h"
#include "loss/binary_cross_entropy.h"
#include "loss/binary_focal_loss.h"
#include "metrics/auc.h"
#include "metrics/mean_metric.h"
#include "sparse/batch.h"
#include "tzrec/protos/model.pb.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::models {

using TensorMap = std::map<std::string, torch::Tensor>;

class Model : public torch::nn::Module {
 public:
  // labels: data_config.label_fields (the first one is used); sample_weights:
  // data_config.sample_weight_fields (the first one, if any, weights the losses).
  // Throws ConfigError / NotSupportedError for losses, metrics and settings not supported.
  Model(const protos::ModelConfig& model_config, std::vector<std::string> labels,
        std::vector<std::string> sample_weights);
  virtual ~Model() = default;

  // Rank models: "logits" [B] and "probs" [B] = sigmoid(logits) for binary losses, "y" [B] for l2_loss.
  // Runs predict_impl under CPU autocast when mixed precision is set (predictions are fp32 either
  // way).
  TensorMap predict(const sparse::Batch& batch);
  // train_config.mixed_precision (mixed_precision.h); nullopt: fp32. create_model sets it.
  void set_mixed_precision(std::optional<c10::ScalarType> dtype) { mixed_precision_ = dtype; }

  // Loss name → scalar: "binary_cross_entropy" = BCE(logits, label), with label smoothing;
  // "binary_focal_loss" on logits; "l2_loss" = MSE(y, label). With a sample weight field,
  // mean(loss_b * w_b / mean(w)). Throws DataError naming a missing label or
  // sample-weight column.
  TensorMap loss(const TensorMap& predictions, const sparse::Batch& batch);
  // Adds the batch to every metric (grouped_auc: throws DataError when the batch lacks the grouping
  // feature; a row with no id for it is group 0, as in tzrec); `losses` (from loss()) feed the loss metrics, weighted by the
  // batch size. Pass an empty map to skip the loss metrics.
  void update_metrics(const TensorMap& predictions, const sparse::Batch& batch, const TensorMap& losses);
  // Metric name → value, e.g. {"auc": .., "binary_cross_entropy": ..}. Does not reset.
  std::map<std::string, double> compute_metrics();
  // Merges every configured metric and every loss metric across the ranks of `pg`, so that
  // compute_metrics() then returns on every rank the value over all ranks' batches (a collective:
  // every rank calls it). Once per evaluation, after the last update_metrics() and before
  // compute_metrics(); a second call before reset_metrics() changes nothing, and update_metrics()
  // after it is refused until reset_metrics(). World size 1: no change.
  void sync_metrics(dist::ProcessGroup& pg);
  void reset_metrics();

  // Sparse parameters (embedding tables; for the sparse optimizer).
  std::vector<embedding::EmbeddingTable> embedding_tables();
  // Every other parameter with its state-dict name (e.g. "deep_mlp.mlp.0.perceptron.0.weight"),
  // in registration order; for the dense optimizer.
  std::vector<std::pair<std::string, torch::Tensor>> dense_parameters();

  const protos::ModelConfig& model_config() const { return model_config_; }
  const std::string& label_name() const { return label_name_; }
  int64_t num_class() const { return num_class_; }
  embedding::EmbeddingGroup& embedding_group() { return embedding_group_; }

 protected:
  virtual TensorMap predict_impl(const sparse::Batch& batch) = 0;

  // Builds the EmbeddingGroup over model_config.feature_groups as submodule "embedding_group".
  // wide_embedding_dim 0 → 4 (tzrec default).
  void init_input(const std::vector<feature::FeatureInfo>& features, int64_t wide_embedding_dim = 0,
                  const std::string& wide_init_fn = "");
  // Throws ConfigError "model_config.feature_groups: <model> needs a feature group named '<g>'".
  void require_group(const std::string& model_name, const std::string& group) const;
  // output: [B, num_class] → predictions per configured loss.
  TensorMap output_to_prediction(const torch::Tensor& output) const;

  protos::ModelConfig model_config_;
  int64_t num_class_ = 1;
  embedding::EmbeddingGroup embedding_group_{nullptr};

 private:
  enum class LossType { kBinaryCrossEntropy, kBinaryFocal, kL2 };
  struct LossEntry {
    std::string name;
    LossType type;
    loss::BinaryCrossEntropy bce;
    loss::BinaryFocalLoss focal;
  };
  // One configured metric; the closures own the metric object (metrics/*.h).
  struct MetricEntry {
    std::string name;
    std::string input;  // prediction key: "probs" or "y"
    std::function<void(const torch::Tensor& pred, const torch::Tensor& label, const sparse::Batch& batch)> update;
    std::function<void(std::map<std::string, double>* out)> compute;
    std::function<void()> reset;
    std::function<void(dist::ProcessGroup& pg)> sync;  // merges the state of every rank (metric's sync())
  };
  const torch::Tensor& batch_label(const sparse::Batch& batch) const;
  void add_metric(const protos::MetricConfig& cfg, const std::string& path, const std::string& type);

  std::string label_name_;
  std::string sample_weight_name_;  // "" = unweighted
  std::vector<LossEntry> losses_;
  bool has_binary_loss_ = false;  // predictions have "logits" / "probs"
  bool has_l2_loss_ = false;      // predictions have "y"
  std::vector<MetricEntry> metrics_;
  std::vector<std::pair<std::string, metrics::MeanMetric>> loss_metrics_;
  std::optional<c10::ScalarType> mixed_precision_;
};

// Builds the model selected by config.model_config's `model` oneof (deepfm, multi_tower).
// Other models → NotSupportedError("model_config.<oneof name>"); no model → ConfigError.
std::shared_ptr<Model> create_model(const protos::EasyRecConfig& config,
                                    const std::vector<feature::FeatureInfo>& features);

}  // namespace tzrec::models
