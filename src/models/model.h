// Model base class with TorchEasyRec RankModel / MultiTaskRank semantics (tzrec/models/rank_model.py,
// multi_task_rank.py, docs/tzrec-compatibility.md §4, §7.1, §7.2, §7.3): predictions, losses,
// eval and train metrics, and the split of parameters for the optimizers. Loss setup and
// evaluation live in model_losses.cc, eval metrics in model_metrics.cc, train metrics in
// model_train_metrics.cc, the Pareto loss weighting in model_loss_weighting.cc.
//
// A model has one or more tasks (model_tasks.h). A single-task model takes the fields below from
// model_config; a multi-task model from each task tower, and every prediction, loss and metric
// name of a tower gets the suffix "_<tower_name>" ("probs_ctr", "binary_cross_entropy_ctr",
// "auc_ctr").
//
// Supported config per task (everything else throws when the model is built):
//   losses (num_class 1):
//            binary_cross_entropy {label_smoothing}, binary_focal_loss {gamma, alpha}
//                → predictions "logits" [B], "probs" [B] = sigmoid(logits)
//            l2_loss → prediction "y" [B] (raw output, no sigmoid)
//   losses (num_class C > 1; the label column holds class ids 0..C-1):
//            softmax_cross_entropy {label_smoothing}; jrc_loss {session_name, alpha} (C must be 2;
//            session = first id of sparse feature session_name per row, loss/jrc_loss.h)
//                → predictions "logits" [B, C], "probs" [B, C] = softmax(logits), and
//                  "probs1" [B] = probs[:, 1] when C == 2
//   eval metrics on the class probabilities (need a classification loss):
//            auc {thresholds} → "auc" (exact AUC); when `thresholds` is set explicitly also
//            "auc_binned" (torchmetrics BinaryAUROC(thresholds) as tzrec reports it)
//            accuracy {threshold, top_k} → "accuracy": binary (p > threshold) for num_class 1,
//            multiclass top-k (torchmetrics micro accuracy, threshold unused) for num_class > 1
//            normalized_entropy {eta} → "normalized_entropy"
//            grouped_auc {grouping_key} → "grouped_auc" (group = first id of sparse feature
//            grouping_key in the batch)
//            auc, normalized_entropy and grouped_auc read "probs" (num_class 1) or "probs1"
//            (num_class 2); num_class > 2 is refused for them.
//            multiclass_auc {thresholds, average} → "multiclass_auc" on "probs" [B, C], C > 1
//            (binned one-vs-rest AUC, averaged "macro" or "weighted"; thresholds 0 = exact)
//   eval metrics on "y" (need l2_loss, as in tzrec, which reads predictions["y"]):
//            mean_absolute_error, mean_squared_error, xauc {sample_ratio, max_pairs, in_batch},
//            grouped_xauc {grouping_key, max_pairs_per_group}
//   recall_at_k needs a match model's "similarity" output: refused for rank models.
//   each loss is also an eval metric under its own name: mean of batch losses weighted by batch size.
//   train_metrics (docs/tzrec-compatibility.md §7.3): auc, accuracy (on the same inputs as
//            above), mean_absolute_error, mean_squared_error, xauc (on "y"), each decayed by
//            decay_rate every decay_step updates (metrics::TrainMetricWrapper); recall_at_k is
//            refused.
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
#include "embedding/embedding_group_set.h"
#include "feature/feature_info.h"
#include "metrics/decay_metric.h"
#include "metrics/mean_metric.h"
#include "models/group_variational_dropouts.h"
#include "models/metric_types.h"
#include "models/model_tasks.h"
#include "nn/task_tower.h"
#include "sparse/batch.h"
#include "tzrec/protos/model.pb.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::models {

using TensorMap = std::map<std::string, torch::Tensor>;

// Prediction key of the rows per batch row ([B] int64) when a model predicts several rows per
// batch row (the candidates of the generative models): TorchEasyRec's TARGET_REPEAT_INTERLEAVE_KEY.
// Losses and metrics then see the batch with prediction_repeats set (grouping keys and sample
// weights repeated per prediction row), and predictions are written as one list per batch row.
inline constexpr const char* kTargetRepeatKey = "__TARGET_REPEAT_INTERLEAVE_KEY__";

class Model : public torch::nn::Module {
 public:
  // labels: data_config.label_fields (a single-task model uses the first one, task towers name
  // theirs); sample_weights: data_config.sample_weight_fields (a single-task model weights its
  // losses by the first one, if any; task towers name theirs).
  // Throws ConfigError / NotSupportedError for losses, metrics and settings not supported.
  Model(const protos::ModelConfig& model_config, std::vector<std::string> labels,
        std::vector<std::string> sample_weights);
  virtual ~Model() = default;

  // TorchEasyRec's is_inference (set by predict): models whose outputs differ outside training and
  // evaluation read it (the SID models then predict only their codes).
  void set_inference(bool inference) { inference_ = inference; }
  bool is_inference() const { return inference_; }
  // TorchEasyRec's on_train_end: called once after the last training step, before its checkpoint
  // is saved (train/trainer.cc). Returns whether the model's state changed (sid_rqkmeans fits its
  // codebook here), so that the final checkpoint is saved with it.
  virtual bool on_train_end() { return false; }

  // Rank models: "logits" [B] and "probs" [B] = sigmoid(logits) for binary losses, "y" [B] for l2_loss;
  // "logits" [B, C], "probs" [B, C] = softmax(logits) (+ "probs1" [B] when C == 2) for
  // softmax_cross_entropy / jrc_loss. Runs predict_impl under CPU autocast when mixed precision is set (predictions are fp32 either
  // way).
  TensorMap predict(const sparse::Batch& batch);
  // train_config.mixed_precision (mixed_precision.h); nullopt: fp32. create_model sets it.
  void set_mixed_precision(std::optional<c10::ScalarType> dtype) { mixed_precision_ = dtype; }

  // Loss name (+ task suffix) → scalar: "binary_cross_entropy" = BCE(logits, label), with label smoothing;
  // "binary_focal_loss" on logits; "l2_loss" = MSE(y, label); "softmax_cross_entropy" =
  // CE(logits [B, C], class id); "jrc_loss" (loss/jrc_loss.h). With a sample weight field,
  // mean(loss_b * w_b / mean(w)). With model_config.variational_dropout also
  // "<group>_feature_p_loss" per group that has one (its penalty from the last predict()). Throws DataError naming a missing label or sample-weight column, a
  // label that is not a class id in [0, num_class) (softmax / jrc), or a missing session feature.
  // Task towers with loss weighting (ModelTask::weighted): the tower's loss with the row weights
  // described there, × the tower weight. `predictions` are predict()'s; the losses read them
  // through task_predictions() (as do the eval and train metrics below).
  // Virtual: models with losses of their own (the SID models, models/sid/sid_model.h) replace it.
  virtual TensorMap loss(const TensorMap& predictions, const sparse::Batch& batch);
  // The loss that training minimises: the sum of `losses` (from loss()). With
  // model_config.use_pareto_loss_weight (multi-task models), the task losses are weighted by the
  // Pareto-efficient weights of this batch instead (loss/pareto_loss_weights.h; the gradients of
  // each task loss with respect to the trainable dense parameters, which are computed here by
  // extra backward passes that touch no embedding table); other losses are added unweighted.
  torch::Tensor total_loss(const TensorMap& losses);
  // Task loss name → weight used by the last total_loss() (Pareto weighting only; else empty).
  const std::map<std::string, double>& loss_weights() const { return loss_weights_; }
  // Adds the batch to every eval metric (grouped_auc / grouped_xauc: throws DataError when the batch
  // lacks the grouping feature; a row with no id for it is group 0, as in tzrec); `losses` (from loss()) feed the loss metrics, weighted by the
  // batch size. Pass an empty map to skip the loss metrics.
  // This and the four metric calls below are virtual for models with metrics of their own (SID models).
  virtual void update_metrics(const TensorMap& predictions, const sparse::Batch& batch, const TensorMap& losses);
  // Metric name → value, e.g. {"auc": .., "binary_cross_entropy": ..}. Does not reset.
  virtual std::map<std::string, double> compute_metrics();
  // Merges every configured metric and every loss metric across the ranks of `pg`, so that
  // compute_metrics() then returns on every rank the value over all ranks' batches (a collective:
  // every rank calls it). Once per evaluation, after the last update_metrics() and before
  // compute_metrics(); a second call before reset_metrics() changes nothing, and update_metrics()
  // after it is refused until reset_metrics(). World size 1: no change.
  virtual void sync_metrics(dist::ProcessGroup& pg);
  virtual void reset_metrics();

  // Train metrics (model_config.train_metrics, docs/tzrec-compatibility.md §7.3). Each is per
  // rank: it sees only this rank's train batches and is never synced (as tzrec's
  // TrainMetricWrapper).
  bool has_train_metrics() const { return !train_metrics_.empty(); }
  // Adds one train batch (the predictions of the step, the batch it ran on) to every train metric;
  // call it once per train step. Throws DataError as update_metrics() for bad labels.
  void update_train_metrics(const TensorMap& predictions, const sparse::Batch& batch);
  // Metric name → current decayed value (same names as the eval metrics, e.g. {"auc": ..}); 0 until
  // a metric's first decay_step updates.
  std::map<std::string, double> compute_train_metrics() const;
  // Back to the initial state (values 0, step counts 0).
  void reset_train_metrics();

  // Sparse parameters (embedding tables; for the sparse optimizer).
  std::vector<embedding::EmbeddingTable> embedding_tables();
  // Every other parameter with its state-dict name (e.g. "deep_mlp.mlp.0.perceptron.0.weight"),
  // in registration order; for the dense optimizer.
  std::vector<std::pair<std::string, torch::Tensor>> dense_parameters();

  const protos::ModelConfig& model_config() const { return model_config_; }
  const std::vector<ModelTask>& tasks() const { return tasks_; }
  // The ranks of a distributed job (nullptr or world size 1: one process), for models whose
  // training loss depends on the other ranks' batches (DlrmHSTU's enable_global_average_loss).
  virtual void set_process_group(dist::ProcessGroup* pg) { process_group_ = pg; }
  // The first task's label and num_class (the only task of a single-task model).
  const std::string& label_name() const { return tasks_.front().label_name; }
  int64_t num_class() const { return num_class_; }
  // The model-level embedding group (nullptr in models whose towers hold their own).
  embedding::EmbeddingGroup& embedding_group() { return embedding_group_; }
  // Every embedding group of the model with its module path (embedding/embedding_group_set.h):
  // what training, sharding, checkpoints and export drive.
  embedding::EmbeddingGroupSet& embeddings() { return embeddings_; }
  const embedding::EmbeddingGroupSet& embeddings() const { return embeddings_; }

 protected:
  virtual TensorMap predict_impl(const sparse::Batch& batch) = 0;

  // Builds the EmbeddingGroup over model_config.feature_groups as submodule "embedding_group"
  // (set_features, make_embedding_group) and, when model_config.variational_dropout is set, one
  // nn::VariationalDropout per group of more than one feature
  // ("group_variational_dropouts.<group>.feature_p", as tzrec's RankModel).
  // wide_embedding_dim 0 → 4 (tzrec default).
  void init_input(const std::vector<feature::FeatureInfo>& features, int64_t wide_embedding_dim = 0,
                  const std::string& wide_init_fn = "");
  // Keeps the model's features and checks the feature keys the losses and metrics read
  // (grouping_key, session_name): each must name a configured sparse feature.
  void set_features(const std::vector<feature::FeatureInfo>& features);
  // An EmbeddingGroup over the feature groups of model_config named in `groups` (every group when
  // empty; errors keep their model_config.feature_groups[i] paths), on the features of
  // set_features().
  embedding::EmbeddingGroup make_embedding_group(const std::vector<std::string>& groups = {},
                                                 int64_t wide_embedding_dim = 0,
                                                 const std::string& wide_init_fn = "") const;
  // "<group>_feature_p_loss" → the penalty of each group variational dropout in the last predict();
  // models whose towers hold the dropouts add theirs.
  virtual TensorMap feature_p_losses() const;
  // Losses a model adds to the configured ones (DAT's AMM losses); they are not eval metrics.
  virtual TensorMap extra_losses(const TensorMap& predictions, const sparse::Batch& batch) const { return {}; }
  // A factor on every loss of `task` for this batch (`label`: the task's label); 1 by default.
  virtual double task_loss_scale(const ModelTask& task, const torch::Tensor& label) const { return 1.0; }
  dist::ProcessGroup* process_group_ = nullptr;
  // The predictions that loss(), update_metrics() and update_train_metrics() read, from those of
  // predict() for `batch`: the same map unless a model overrides it. PEPNet with
  // domain_input_name predicts every task once per domain ("logits_<tower>_<d>") and keeps, per
  // row, the domain its label column names ("logits_<tower>"), as tzrec's
  // PEPNet._select_domain_task_output. Throws DataError for a batch it cannot map.
  virtual TensorMap task_predictions(const TensorMap& predictions, const sparse::Batch& batch) const {
    return predictions;
  }
  // `dim` (a model's wide_embedding_dim at `path`) when > 0; ConfigError otherwise.
  static int64_t checked_wide_embedding_dim(uint32_t dim, const std::string& path);
  //
  // Throws ConfigError "model_config.feature_groups: <model> needs a feature group named '<g>'
  // (group_type: <type>)", or "<group path>.group_type: <model> group '<g>' must be <type>".
  void require_group(const std::string& model_name, const std::string& group, protos::FeatureGroupType type) const;
  // The embedding_dim every feature of `group` shares; `reader` ("FM", "DLRM's sparse group")
  // names what needs that in the ConfigError about a dense feature or a different dim.
  int64_t common_embedding_dim(const std::string& group, const std::string& reader) const;
  // "model_config.feature_groups[i]" of group `name` ("model_config.feature_groups" when unknown).
  std::string group_path(const std::string& name) const;
  // Multi-task models: the first feature group (ConfigError naming `model_name` when there is none).
  std::string first_group(const std::string& model_name) const;
  // Multi-task models: one nn::TaskTower per task (tasks_[t].path for errors) on an input of
  // in_dims[t], registered as submodule "_task_tower" (a ModuleList, as tzrec's MMoE and PLE).
  std::vector<nn::TaskTower> register_task_towers(const google::protobuf::RepeatedPtrField<protos::TaskTower>& towers,
                                                  const std::vector<int64_t>& in_dims);
  // The embedding group's outputs (group → [B, group_total_dim]) after the group variational
  // dropouts; models read their inputs through this. Keeps each dropout's penalty for loss().
  std::map<std::string, torch::Tensor> build_input(const sparse::Batch& batch);
  // The loss weights of `task` for this batch ([B]), undefined when the task has none.
  torch::Tensor task_loss_weight(const ModelTask& task, const sparse::Batch& batch) const;
  // output: [B, num_class] → predictions per configured loss (single-task models).
  TensorMap output_to_prediction(const torch::Tensor& output) const;
  // output: [B, tasks()[task].num_class] → that task's predictions (suffixed) into *predictions.
  void task_output_to_prediction(size_t task, const torch::Tensor& output, TensorMap* predictions) const;

  protos::ModelConfig model_config_;
  // Whether the model reads JAGGED_SEQUENCE groups (their "<g>.sequence" holds only the valid items,
  // embedding/sequence_embedding_group.h); make_embedding_group() refuses them otherwise.
  bool reads_jagged_sequences_ = false;
  bool inference_ = false;  // set_inference
  // Whether the model reads list label columns (Batch::jagged_label_values: one label per
  // candidate, TorchEasyRec's jagged labels); task_label() refuses them otherwise.
  bool reads_jagged_labels_ = false;
  std::vector<ModelTask> tasks_;
  int64_t num_class_ = 1;  // tasks_[0].num_class
  embedding::EmbeddingGroup embedding_group_{nullptr};
  embedding::EmbeddingGroupSet embeddings_;
  std::vector<feature::FeatureInfo> features_;  // as passed to init_input

 private:
  // One configured loss; `compute` owns the loss object (loss/*.h).
  struct LossEntry {
    size_t task = 0;
    std::string name;   // loss oneof name + task suffix, e.g. "softmax_cross_entropy_ctr"
    std::string input;  // prediction key: "logits" or "y" (+ task suffix)
    // pred: predictions[input]; label: the batch label column as stored ([B] float32); weight: [B]
    // or undefined.
    std::function<torch::Tensor(const torch::Tensor& pred, const torch::Tensor& label, const torch::Tensor& weight,
                                const sparse::Batch& batch)>
        compute;
  };
  // One configured eval metric; the closures own the metric object (metrics/*.h).
  struct MetricEntry {
    size_t task = 0;
    std::string name;   // metric name + task suffix
    std::string input;  // prediction key: "probs", "probs1" or "y" (+ task suffix)
    std::function<void(const torch::Tensor& pred, const torch::Tensor& label, const sparse::Batch& batch)> update;
    std::function<void(std::map<std::string, double>* out)> compute;
    std::function<void()> reset;
    std::function<void(dist::ProcessGroup& pg)> sync;  // merges the state of every rank (metric's sync())
  };
  struct TrainMetricEntry {
    size_t task = 0;
    std::string name;
    std::string input;  // prediction key, as MetricEntry
    metrics::TrainMetricWrapper metric;
  };
  // A feature a loss or metric reads by name (jrc_loss.session_name, grouping_key): checked in
  // init_input against the features.
  struct FeatureKey {
    std::string path;  // config field, e.g. "model_config.metrics[1].grouped_auc.grouping_key"
    std::string key;
  };
  std::vector<FeatureKey> feature_keys_;
  void check_feature_keys() const;
  const torch::Tensor& batch_label(const sparse::Batch& batch, const std::string& label) const;
  // The label a task's losses and metrics compare with: its label column ([B]), or its list
  // column's values ([Σ candidates], models that read jagged labels); with task.label_bitmask, 1
  // where (label & bitmask) > 0 and 0 elsewhere (FusionSubTaskConfig.task_bitmask).
  torch::Tensor task_label(const ModelTask& task, const sparse::Batch& batch) const;
  // `batch`, or when `predictions` hold kTargetRepeatKey a copy of it in *storage with
  // prediction_repeats set.
  static const sparse::Batch& prediction_rows(const TensorMap& predictions, const sparse::Batch& batch,
                                              std::optional<sparse::Batch>* storage);
  // What a metric of `task` compares `pred` with: the task's label column, or for a match task the
  // bool targets [B, N] of its similarity matrix `pred` (column 0, or the diagonal with
  // in_batch_negative).
  torch::Tensor metric_label(const ModelTask& task, const torch::Tensor& pred, const sparse::Batch& batch) const;
  // model_losses.cc: losses_ and the tasks' prediction flags from their losses.
  void init_losses();
  void init_task_losses(size_t task);
  void init_match_loss(size_t task);
  // model_metrics.cc: metrics_ from the tasks' metrics.
  void init_metrics();
  void add_metric(size_t task, const protos::MetricConfig& cfg, const std::string& path, const std::string& type);
  // model_train_metrics.cc: train_metrics_ from the tasks' train_metrics.
  void init_train_metrics();
  void init_task_train_metrics(size_t task);
  // Prediction key a classification metric reads: "probs" (num_class 1, or `multiclass`), "probs1"
  // (binary metric, num_class 2). Throws ConfigError when the losses do not produce it or num_class
  // does not fit (binary metric with num_class > 2, multiclass metric with num_class 1).
  // Keys carry the task suffix.
  std::string class_metric_input(const ModelTask& task, const std::string& path, const std::string& type,
                                 bool multiclass) const;
  // "y" (+ suffix) for a regression metric; ConfigError without l2_loss.
  std::string regression_metric_input(const ModelTask& task, const std::string& path, const std::string& type) const;
  // The prediction key of a metric reading `input` (models/metric_types.h).
  std::string metric_input(const ModelTask& task, const std::string& path, const std::string& type,
                           MetricInput input) const;
  // ConfigError unless every task's pareto_min_loss_weight is >= 0 and they sum (once per task
  // loss) to less than 1.
  void check_pareto_bounds() const;
  // model_loss_weighting.cc: Pareto weights of the task losses (name → weight).
  std::map<std::string, double> pareto_loss_weights(const TensorMap& losses);

  std::vector<LossEntry> losses_;
  std::vector<MetricEntry> metrics_;
  std::vector<std::pair<std::string, metrics::MeanMetric>> loss_metrics_;
  std::vector<TrainMetricEntry> train_metrics_;
  std::optional<c10::ScalarType> mixed_precision_;
  GroupVariationalDropouts variational_dropouts_;  // of the model-level embedding group
  std::map<std::string, double> loss_weights_;  // of the last total_loss()
};

// Builds the model selected by config.model_config's `model` oneof (deepfm, multi_tower,
// wide_and_deep, dcn_v1, dcn_v2, dlrm, xdeepfm, mask_net, mmoe, dbmtl, ple, pepnet, dssm, dssm_v2).
// Other models → NotSupportedError("model_config.<oneof name>"); no model → ConfigError.
// `tower` ("user_tower" / "item_tower", match models only; UsageError otherwise): the model with
// that tower alone, predicting "<tower>_emb" (match/match_model.h; what a tower's export holds).
std::shared_ptr<Model> create_model(const protos::EasyRecConfig& config,
                                    const std::vector<feature::FeatureInfo>& features,
                                    const std::string& tower = "");

}  // namespace tzrec::models
