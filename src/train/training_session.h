// Everything one training or evaluation run holds: features, model and optimizers, plus the
// mapping between them and checkpoint tensors.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "dist/process_group.h"
#include "dist/sharded_embedding_bags.h"
#include "train/sharded_tables.h"
#include "dist/sharding_plan.h"
#include "embedding/fused_embedding_bags.h"
#include "feature/feature_info.h"
#include "models/model.h"
#include "optim/dense_ema.h"
#include "optim/dense_optimizer.h"
#include "optim/grad_clipping.h"
#include "optim/grad_scaler.h"
#include "optim/gradient_accumulation.h"
#include "optim/lr_scheduler.h"
#include "checkpoint/checkpoint.h"
#include "train/dense_gradient_sync.h"
#include "train/remapped_shard_checkpoint.h"
#include "checkpoint/distributed_checkpoint.h"
#include "checkpoint/sharded_checkpoint.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::train {

// Whether evaluation uses the EMA weights: eval_config.use_dense_ema when set, else whether
// train_config.dense_optimizer.ema is configured (docs/tzrec-compatibility.md §2.6).
bool use_dense_ema_for_eval(const protos::EasyRecConfig& config);

// The entries of `in` whose key starts with `prefix`, with the prefix removed.
std::map<std::string, torch::Tensor> strip_prefix(const std::map<std::string, torch::Tensor>& in,
                                                  const std::string& prefix);
// A checkpoint's optimizer state that belongs to the dense optimizer itself: the "dense." entries
// (prefix removed) except the EMA's ("ema."), the FP16 loss scaler's ("grad_scaler.") and the part
// optimizers' ("part<i>.").
std::map<std::string, torch::Tensor> dense_optimizer_state(const std::map<std::string, torch::Tensor>& optimizer_state);

// Dense parameters are split between the dense optimizer and dense_optimizer.part_optimizers: each
// parameter goes to the first part optimizer whose regex_pattern (std::regex ECMAScript, full
// match, like Python's re.fullmatch) matches its TorchEasyRec FQN "model.<state-dict name>" (the
// model sits under TrainWrapper's "model" attribute there, docs/tzrec-compatibility.md §8.1);
// unmatched ones stay with the dense optimizer. A part optimizer that matches nothing is dropped
// with a warning, as in TorchEasyRec. Checkpoint optimizer keys: "dense.<param>.<slot>" for the
// dense optimizer, "dense.part<i>.<param>.<slot>" for part_optimizers[i], "dense.ema.<param>" and
// "dense.ema.__n_averaged__" for the EMA, "dense.grad_scaler.scale" ([] float32) and
// "dense.grad_scaler.growth_tracker" ([] int64) for the FP16 loss scaler.
//
// train_config.mixed_precision "FP16" trains with a loss scaler (optim/grad_scaler.h, configured by
// train_config.grad_scaler): backward runs on loss * S; the fused sparse optimizer unscales the
// pooled gradient itself and skips its update when that gradient is not finite; at the end of an
// accumulation window (after the cross-rank sync) the dense gradients are unscaled and, when any
// dense or sparse gradient of the window was inf / nan (agreed across ranks), the dense step and
// the EMA update are skipped; then S is updated. A step in which only a dense parameter's gradient
// overflows skips the dense update only: the sparse rows were already updated in backward with
// their finite gradient.
class TrainingSession {
 public:
  // with_optimizers=false builds the model only (eval / predict). A single-process session first
  // checks that its tables (and the sparse optimizer's state) fit this machine
  // (check_tables_fit_one_process: ConfigError naming the table, before anything is allocated),
  // unless it is built under the caller's DeferTableAllocation. With a process group of more
  // than one rank the session is distributed: the embedding tables are sharded by a plan
  // (`saved_plan` when restoring and still valid, else planned; train/embedding_sharding.h) and
  // hold only this rank's shards, dense parameters start from rank 0's values and their gradients
  // are averaged over the ranks before every dense step.
  // `model_tower`: build one tower of a match model alone (models::create_model; exports).
  TrainingSession(const protos::EasyRecConfig& config, bool with_optimizers,
                  std::shared_ptr<dist::ProcessGroup> process_group = nullptr,
                  const std::optional<dist::ShardingPlan>& saved_plan = std::nullopt,
                  const std::string& model_tower = "");

  // Builds from `config` everything the constructor builds — features, the model with its losses
  // and metrics, optimizers, learning-rate schedules, grad scaler, clipping, accumulation — with
  // no embedding table allocated and no data read, then discards it: every ConfigError a training
  // job raises while it is being set up is raised here (tzrec check_config). For a job of
  // `world_size` 1 that includes the memory rule of one process (check_tables_fit_one_process,
  // train/embedding_sharding.h); a job of more ranks is checked by plan_job instead.
  static void check_construction(const protos::EasyRecConfig& config, int world_size = 1);

  const protos::EasyRecConfig& config() const { return config_; }
  models::Model& model() { return *model_; }
  // The embedding tables' fused operator: the sparse optimizer runs inside its backward. Single
  // process only (TORCH_CHECK); a distributed session has sharded_embeddings() instead.
  embedding::FusedOptimizerGroup& sparse_optimizer();
  // nullptr unless distributed.
  ShardedTables* sharded_embeddings() { return sharded_.get(); }
  dist::ProcessGroup* process_group() { return process_group_.get(); }
  bool distributed() const { return sharded_ != nullptr; }
  // Time spent in the embedding lookups and fused updates of this rank (local shards).
  embedding::FusedEmbeddingBags::Timing embedding_timing() const;
  optim::DenseOptimizer& dense_optimizer() { return *dense_optimizer_; }
  bool has_optimizers() const { return dense_optimizer_ != nullptr; }

  // Parameters and buffers by state-dict name (what model.safetensors holds).
  std::vector<std::pair<std::string, torch::Tensor>> model_tensors();
  // "sparse.<...>" and "dense.<...>" optimizer state (distributed: "dense.<...>" only; the sparse
  // state lives in the shards).
  std::map<std::string, torch::Tensor> optimizer_state() const;

  // Restores the model (and optimizer state unless restore_optimizer is false) from a checkpoint.
  // Distributed: dense tensors from `checkpoint`, this rank's shards (and their optimizer state)
  // read block by block from checkpoint.dir, whatever world size wrote it.
  void restore(const checkpointing::CheckpointData& checkpoint, bool restore_optimizer);
  // Distributed: this rank's table shards and their sparse optimizer state as checkpoint blocks
  // (names as in a single-process checkpoint: "embedding_group.emb_impls.__BASE__.ebc.
  // embedding_bags.<table>.weight" or a sequence table's, "sparse.<table>.<slot>"). With `rows`
  // (what checkpoints save), dynamic tables' blocks are cut to their rows in use
  // (embedding/dynamic_checkpoint_layout.h); without, every row of the shards.
  checkpointing::ShardBlocks checkpoint_blocks(const DynamicRowsInUse* rows = nullptr) const;

  // Backward of `total_loss` and the optimizer work of global step `step`, in TorchEasyRec's order:
  // gradient accumulation (dense gradients kept over the window, loss divided by its length),
  // loss scaling (FP16), learning rates from the schedules, dense gradient sync (distributed),
  // unscaling and the overflow check (FP16), the gradient observer, dense gradient clipping, then
  // the updates. The sparse side updates on every step, as fused embedding optimizers do.
  void backward_and_step(const torch::Tensor& total_loss, int64_t step);
  // Called by backward_and_step with the step number once the dense gradients are final (synced
  // across ranks, unscaled) and before clipping and the dense step, only on steps where the dense
  // step happens (not inside an accumulation window, not on a skipped FP16 step). For gradient
  // summaries: read the parameters' .grad. An empty function removes the observer.
  void set_gradient_observer(std::function<void(int64_t step)> observer);
  // The FP16 loss scaler; nullptr unless mixed_precision is "FP16" (and optimizers are built).
  const optim::GradScaler* grad_scaler() const { return scaler_.get(); }
  // The current loss scale S; 1.0 without a scaler.
  double grad_scale() const { return scaler_ ? scaler_->scale_value() : 1.0; }
  // Whether the last backward_and_step skipped an update for inf / nan gradients: the sparse
  // update of that step, or the dense step of the window it ended.
  bool last_step_skipped() const { return last_step_skipped_; }
  // Advance the per-step schedules after a trained step / the per-epoch ones at an epoch end.
  void advance_step_schedules();
  void advance_epoch_schedules();
  // Puts the schedules where an uninterrupted run would be after `trained_steps` steps and
  // `epochs_completed` epochs (used by --continue_train).
  void set_schedule_position(int64_t trained_steps, int64_t epochs_completed);
  double sparse_lr() const { return sparse_lr_->lr(); }
  double dense_lr() const { return dense_lr_->lr(); }
  // Learning rates of the dense optimizer followed by those of the part optimizers that matched
  // parameters, in config order: TorchEasyRec's lr_g1, lr_g2, ... (lr_g0 is sparse_lr()).
  std::vector<double> dense_group_lrs() const;
  // Part optimizers that matched parameters, in config order, with their config index.
  size_t num_part_optimizers() const { return parts_.size(); }
  optim::DenseOptimizer& part_optimizer(size_t i) { return *parts_.at(i).optimizer; }
  int part_optimizer_config_index(size_t i) const { return parts_.at(i).config_index; }

  // Dense EMA (train_config.dense_optimizer.ema); only in sessions with optimizers. nullptr if off.
  optim::DenseEma* dense_ema() { return ema_.get(); }
  // "<param>" → EMA shadow tensor (live); empty without EMA.
  std::map<std::string, torch::Tensor> ema_tensors() const;
  // Swaps the EMA weights into the model until the guard dies (no-op guard when `enabled` is
  // false or there is no EMA). For evaluation during train_eval:
  //   auto ema = session.swap_in_ema(use_dense_ema_for_eval(config)); evaluate(...);
  std::unique_ptr<optim::EmaSwapGuard> swap_in_ema(bool enabled);
  // For a session restored from a checkpoint (e.g. `tzrec eval`): overwrites the dense parameters
  // with the checkpoint's "dense.ema.<param>" tensors. CheckpointError naming the first missing key
  // when the checkpoint has no EMA state (trained without dense_optimizer.ema); the message tells
  // the user to turn `setting` off.
  void load_ema_weights(const checkpointing::CheckpointData& checkpoint,
                        const std::string& setting = "eval_config.use_dense_ema");

 private:
  protos::EasyRecConfig config_;
  std::vector<feature::FeatureInfo> features_;
  std::shared_ptr<models::Model> model_;
  embedding::FusedOptimizerGroup* sparse_optimizer_ = nullptr;  // owned by the model's embedding group (single process)
  std::shared_ptr<dist::ProcessGroup> process_group_;
  std::unique_ptr<ShardedTables> sharded_;  // distributed
  std::unique_ptr<DenseGradientSync> gradient_sync_;     // distributed
  void set_sparse_lr(double lr);
  void restore_shards(const std::string& ckpt_dir, bool restore_optimizer);
  void restore_shard_optimizer_state(const std::string& ckpt_dir, const checkpointing::CheckpointTensorIndex& index);
  std::unique_ptr<optim::DenseOptimizer> dense_optimizer_;
  std::unique_ptr<optim::LrScheduler> sparse_lr_;
  std::unique_ptr<optim::LrScheduler> dense_lr_;
  optim::GradClippingOptions clipping_;
  optim::GradientAccumulation accumulation_{0};
  std::vector<torch::Tensor> dense_params_;  // clipped by grad_clipping (never embedding tables)
  struct Part {
    int config_index = 0;
    std::unique_ptr<optim::DenseOptimizer> optimizer;
    std::unique_ptr<optim::LrScheduler> lr;
  };
  std::vector<Part> parts_;
  std::unique_ptr<optim::DenseEma> ema_;
  std::unique_ptr<optim::GradScaler> scaler_;  // FP16 only
  bool window_found_inf_ = false;  // some sparse backward of the accumulation window overflowed
  bool last_step_skipped_ = false;
  std::function<void(int64_t)> gradient_observer_;

  std::vector<optim::LrScheduler*> schedulers();
  void set_sparse_gradient_scale(std::optional<double> scale);
  bool sparse_found_inf() const;
  // Unscales the dense gradients; whether any gradient of the window (dense or sparse, any rank)
  // was not finite.
  bool unscale_and_check();
};

}  // namespace tzrec::train
