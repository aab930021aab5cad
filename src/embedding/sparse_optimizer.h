// Reference (unfused) sparse optimizer for embedding tables, matching the TorchRec/FBGEMM fused
// optimizers that TorchEasyRec's `sparse_optimizer` selects (reference §2.7). The fused fast path
// (optimizer applied inside backward) must match this implementation.
//
// Per step, for each trainable table with a gradient: the sparse gradient [nnz, dim] is coalesced
// (duplicate ids summed, as FBGEMM sums a row's gradient over the batch before updating) and only
// the touched rows are updated. g below is the coalesced row gradient, lr the current learning rate.
//   SGD (EmbOptimType.EXACT_SGD):       w -= lr * g
//   Adagrad (EXACT_ADAGRAD):            G += g*g ;  w -= lr * g / (sqrt(G) + eps)
//                                       G [rows, dim] starts at initial_accumulator_value; eps 1e-8.
//   Adam (ADAM):  t = table step (FBGEMM's per-module `iter`, 1 at the first update; incremented for
//                 every trainable table on every step(), touched or not, as FBGEMM increments iter
//                 on every forward);
//                 m = beta1*m + (1-beta1)*g ;  v = beta2*v + (1-beta2)*g*g
//                 w -= lr * ( (m / (1-beta1^t)) / (sqrt(v / (1-beta2^t)) + eps) + weight_decay * w )
//                 (FBGEMM's adam kernel: weight decay is decoupled, inside the lr factor, using the
//                 pre-update weight; untouched rows are not decayed.)
// gradient_clipping: FBGEMM clamps the *pooled output gradient* grad_output [B, total_dim] to
// [-max_gradient, max_gradient] before it is scattered to rows (TBE backward host code), not the
// coalesced row gradient. That happens in the forward graph, so it is configured on the
// EmbeddingBagCollection / EmbeddingGroup (set_gradient_clipping), not here.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/embedding_config.h"

namespace tzrec::embedding {

struct SparseOptimizerOptions {
  enum class Kind { kSgd, kAdagrad, kAdam };
  Kind kind = Kind::kSgd;
  double lr = 0.002;
  // Applied by the EmbeddingBagCollection backward (see above); carried here so that one struct
  // describes the configured optimizer.
  bool gradient_clipping = false;
  double max_gradient = 1.0;
  double initial_accumulator_value = 0.0;  // adagrad
  double beta1 = 0.9, beta2 = 0.999;       // adam
  double weight_decay = 0.0;               // adam (FBGEMM decoupled form)
  double eps = 1e-8;                       // FBGEMM default for adagrad and adam
};

class SparseOptimizer {
 public:
  // Tables whose weight is not float32 or not 2-D → TORCH_CHECK. Frozen tables get no state and
  // are never touched. Duplicate table names → TORCH_CHECK.
  SparseOptimizer(SparseOptimizerOptions options, std::vector<EmbeddingTable> tables);

  // Drops the weight gradients (set to undefined, like torch 2.x zero_grad(set_to_none=True)).
  void zero_grad();
  void step();

  void set_lr(double lr) { options_.lr = lr; }
  double lr() const { return options_.lr; }
  const SparseOptimizerOptions& options() const { return options_; }

  // Keys per trainable table: adagrad "<table>.momentum1" [rows, dim] (the sum of squares);
  // adam "<table>.momentum1" (exp_avg) and "<table>.momentum2" (exp_avg_sq) [rows, dim] and
  // "<table>.step" [] int64; sgd has no state. Tensors are the live state (not copies).
  std::map<std::string, torch::Tensor> state_dict() const;
  // Copies values into the state. A missing key, an unexpected key or a shape mismatch →
  // tzrec::CheckpointError naming the key.
  void load_state_dict(const std::map<std::string, torch::Tensor>& state);

 private:
  struct TableState {
    EmbeddingTable table;
    torch::Tensor momentum1;  // [rows, dim] float32 (adagrad, adam)
    torch::Tensor momentum2;  // [rows, dim] float32 (adam)
    int64_t step = 0;         // adam
  };
  void update_table(TableState& state, const torch::Tensor& grad);

  SparseOptimizerOptions options_;
  std::vector<TableState> tables_;  // trainable tables only
};

}  // namespace tzrec::embedding
