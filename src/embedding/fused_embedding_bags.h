// FusedEmbeddingBags: one table-batched embedding-bag operator for a group of tables, with the
// sparse optimizer fused into backward (FBGEMM's SplitTableBatchedEmbeddingBagsCodegen on CPU).
//
// forward() pools every feature of the group into one output [B, sum over features of the table
// dim] (features in order) and records an autograd node. Its backward never produces a weight
// gradient: it clips the pooled output gradient (if configured), sums the gradient of every
// distinct row touched by the batch and applies the optimizer to that row in place (tbe_kernels.h,
// fused_row_optimizer.h for the formulas). The weights' .grad stays undefined, so dense optimizers
// and zero_grad() never see these tables.
//
// The step counter t of adam / lamb / partial_rowwise_* advances once per backward for every
// trainable table of the group, touched or not (FBGEMM's per-module iter). The learning rate used is the one set when backward runs (set_lr).
//
// Loss scaling (FP16 training, optim/grad_scaler.h): with a gradient scale S set, backward sees
// the gradient of S * loss. It first checks it: any inf / nan skips the whole update of that
// backward (no row, no optimizer state, no step counter changes) and is reported by
// last_backward_found_inf(); otherwise the gradient is multiplied by 1/S (S's float32
// reciprocal, as on the dense side) before clipping and the row updates.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/fused_row_optimizer.h"

namespace tzrec::embedding {

struct FusedTableSpec {
  std::string name;
  // [num_embeddings, embedding_dim] contiguous CPU tensor, float32, or float16 for data_type FP16
  // (binary16 storage, float32 math). Shared, not copied: backward updates it in place. Trainable
  // tables' weights are set to require grad (that is what makes autograd call the backward).
  torch::Tensor weight;
  bool trainable = true;  // frozen tables are never updated and get no optimizer state
  // TableConfig::rows_on_demand: optimizer state whose initial value is 0 starts in demand-paged
  // memory (the owner resets a row's state when it hands the row out).
  bool rows_on_demand = false;
};

struct FusedFeatureSpec {
  std::string name;        // feature name, for messages
  std::string table_name;  // one of the group's tables; several features may share a table
  std::string pooling = "sum";  // "sum" | "mean" (mean = sum(w_i * e_i) / L, 0 for an empty bag)
};

// The batch values of one feature. Give offsets or lengths.
struct FusedFeatureInput {
  torch::Tensor ids;      // [N] int64 (int32 accepted)
  torch::Tensor offsets;  // [B + 1] int64, offsets[0] = 0, offsets[B] = N; or undefined
  torch::Tensor lengths;  // [B] int64, used when offsets is undefined
  torch::Tensor weights;  // [N] float32 per-id weights, or undefined; must not require grad
};

class FusedEmbeddingBags {
 public:
  // Throws tzrec::ConfigError for duplicate table names, a feature naming an unknown table or a
  // bad pooling; TORCH_CHECK for weights that are not 2-D contiguous CPU float32/float16.
  FusedEmbeddingBags(std::vector<FusedTableSpec> tables, std::vector<FusedFeatureSpec> features,
                     FusedOptimizerOptions options);

  // inputs: one per feature, in feature order, all with the same batch size B. Returns [B,
  // total_dim()] float32. Ids outside a table, inconsistent offsets/lengths or batch sizes →
  // tzrec::DataError naming the feature (and the table); per-id weights that require grad →
  // tzrec::NotSupportedError.
  torch::Tensor forward(const std::vector<FusedFeatureInput>& inputs);

  int64_t total_dim() const;
  // Output width of every feature, in feature order.
  std::vector<int64_t> feature_dims() const;
  // The specs as given (weights are the live tensors).
  std::vector<FusedTableSpec> tables() const;
  std::vector<FusedFeatureSpec> features() const;
  const FusedOptimizerOptions& options() const;

  void set_lr(double lr);
  double lr() const;

  // The loss scale S of the gradients backward receives (see above); nullopt (the default): no
  // unscaling and no finiteness check. S must be > 0 (TORCH_CHECK).
  void set_gradient_scale(std::optional<double> scale);
  std::optional<double> gradient_scale() const;
  // Whether the latest backward skipped its update because its gradient held inf / nan (only
  // checked while a gradient scale is set). Reset to false by every forward() that records a
  // backward.
  bool last_backward_found_inf() const;

  // Optimizer state, keys per trainable table (the checkpoint names, "sparse." + key):
  //   "<table>.momentum1"  [rows, dim] or [rows] (rowwise_adagrad)        float32
  //   "<table>.momentum2"  [rows, dim] or [rows] (partial_rowwise_*)      float32
  //   "<table>.step"       [] int64 (adam, lamb, partial_rowwise_adam / _lamb)
  // Tensors are the live state (not copies); sgd has none.
  std::map<std::string, torch::Tensor> state_dict() const;
  // Copies values into the state. A missing key, an unexpected key or a shape mismatch →
  // tzrec::CheckpointError naming the key.
  void load_state_dict(const std::map<std::string, torch::Tensor>& state);
  // Puts the state of rows `rows` [K] int64 of table `table` (its name) back to its initial value:
  // momentum1 initial_momentum1 (fused_row_optimizer.h), momentum2 0; the step counter is left
  // alone; nothing for a frozen table or sgd. TORCH_CHECK: a table of this operator.
  void reset_state_rows(const std::string& table, const torch::Tensor& rows);

  // Wall time spent in forward() (validation + pooling) and in the fused backward (gradient
  // aggregation + optimizer update), accumulated since construction or reset_timing(); for the
  // step-time split of benchmarks and the trainer's profile line.
  struct Timing {
    double forward_seconds = 0;
    double backward_seconds = 0;
    int64_t forward_calls = 0;
    int64_t backward_calls = 0;
  };
  const Timing& timing() const;
  void reset_timing();

  // Delta embedding dumps (touched_rows.h): from now on every forward() in grad mode (training;
  // evaluation and predict run without it) marks the rows it reads, per table, frozen tables
  // included.
  void track_touched_rows();
  // The rows of table `table` (its index in tables()) marked since the previous call, [K] int64
  // ascending. TORCH_CHECK: tracking is on.
  torch::Tensor take_touched_rows(size_t table);
  // A copy of rows `rows` [K] int64 of table `table` as float32 [K, dim].
  torch::Tensor read_rows(size_t table, const torch::Tensor& rows) const;

  struct Group;  // shared with the autograd node

 private:
  std::shared_ptr<Group> group_;
};

// Offsets [B + 1] from lengths [B] (int64).
torch::Tensor offsets_from_lengths(const torch::Tensor& lengths);

}  // namespace tzrec::embedding
