// Per-row update rules of the sparse optimizers that run fused into the embedding backward
// (FBGEMM's table-batched-embedding optimizers, docs/tzrec-compatibility.md §2.7), and the layout
// of their state.
//
// A fused backward aggregates, for every distinct row touched by the batch, the row gradient g [D]
// (the sum over all occurrences of the row, per-id weights and mean pooling applied), then calls
// apply_row_update() once for that row. Rows the batch does not touch are never read or written
// (no momentum decay, no weight decay for them), exactly as FBGEMM. lr is the learning rate of the
// step; t is the table's step counter (1 at the first update, see FusedEmbeddingBags), bc1 = 1 -
// beta1^t, bc2 = 1 - beta2^t; norms are L2 norms over the row. Formulas (FBGEMM codegen semantics):
//   sgd:              w -= lr * g
//   adagrad:          m1 += g*g ;  w -= lr * g / (sqrt(m1) + eps)                     m1 [rows, D]
//   rowwise_adagrad:  g' = g + wd*w (L2 mode) else g ;  m1 += mean(g'^2) ;            m1 [rows]
//                     mult = lr / (sqrt(m1) + eps) ;
//                     c = 1 - mult*wd (L2) | 1 - lr*wd (DECOUPLE) | 1 (NONE) ;  w = c*w - mult*g
//   adam:             m1 = b1*m1 + (1-b1)*g ;  m2 = b2*m2 + (1-b2)*g*g ;              m1, m2 [rows, D]
//                     w -= lr * ((m1/bc1) / (sqrt(m2/bc2) + eps) + wd*w)   (decoupled, pre-update w)
//   partial_rowwise_adam: m1 as adam ;  m2 = b2*m2 + (1-b2)*mean(g^2) ;               m1 [rows, D], m2 [rows]
//                     w -= lr * ((m1/bc1) / (sqrt(m2/bc2) + eps) + wd*w)
//   lamb:             m1, m2 as adam ;  r = (m1/bc1) / (sqrt(m2/bc2) + eps) + wd*w ;  m1, m2 [rows, D]
//                     w -= lr * (|w| / |r|) * r          (trust ratio per row, pre-update w)
//   partial_rowwise_lamb: m1 as adam, m2 as partial_rowwise_adam ;                   m1 [rows, D], m2 [rows]
//                     r = (m1/bc1) / (sqrt(m2/bc2) + eps) + wd*w ;  w -= lr * (|w| / |r|) * r
//   lars_sgd:         a = lr * eta * |w| / (|g| + wd*|w|) ;                           m1 [rows, D]
//                     m1 = momentum*m1 + a*(g + wd*w) ;  w -= m1
//   adadelta:         g' = g + wd*w ;  m1 = rho*m1 + (1-rho)*g'^2 ;                  m1, m2 [rows, D]
//                     delta = sqrt(m2 + eps) / sqrt(m1 + eps) * g' ;  m2 = rho*m2 + (1-rho)*delta^2 ;
//                     w -= lr * delta                                      (rho in the beta1 slot)
//   rmsprop:          g' = g + wd*w ;  m1 = alpha*m1 + (1-alpha)*g'^2 ;                m1 [rows, D]
//                     w -= lr * g' / (sqrt(m1) + eps)                      (alpha in the beta1 slot)
// TorchEasyRec's sparse adadelta / rmsprop kernels are not in the public FBGEMM; these two are
// torch.optim.Adadelta / RMSprop (momentum 0, not centered) applied element-wise to the rows a
// batch touches, with the state per element (docs/tzrec-compatibility.md §2.7).
// Where FBGEMM would divide 0 by 0 (a zero row in lamb / lars), the factor is taken as 0.
// Math is float32 (FBGEMM's accumulation type); the step-dependent factors are computed in double.
#pragma once

#include <cstdint>
#include <string>

namespace tzrec::embedding {

enum class FusedOptimizerKind {
  kSgd,
  kAdagrad,
  kRowwiseAdagrad,
  kAdam,
  kLamb,
  kPartialRowwiseAdam,
  kPartialRowwiseLamb,
  kLarsSgd,
  kAdadelta,
  kRmsprop,
};

// FBGEMM's WeightDecayMode, used by rowwise_adagrad only.
enum class WeightDecayMode { kNone, kL2, kDecouple };

// The configured sparse optimizer (one per group of tables). Defaults follow TorchEasyRec's
// optimizer.proto / FBGEMM.
struct FusedOptimizerOptions {
  FusedOptimizerKind kind = FusedOptimizerKind::kSgd;
  double lr = 0.002;
  // Clamp the pooled output gradient [B, total_dim] to [-max_gradient, max_gradient] before it is
  // scattered to rows (FBGEMM TBE backward).
  bool gradient_clipping = false;
  double max_gradient = 1.0;
  double initial_accumulator_value = 0.0;  // adagrad, rowwise_adagrad: initial m1
  double beta1 = 0.9, beta2 = 0.999;       // adam, lamb, partial_rowwise_adam/lamb; beta1: rho of
                                           // adadelta, alpha of rmsprop
  double weight_decay = 0.0;               // every kind but sgd / adagrad
  WeightDecayMode weight_decay_mode = WeightDecayMode::kNone;  // rowwise_adagrad
  double eps = 1e-8;
  double momentum = 0.9;  // lars_sgd
  double eta = 0.001;     // lars_sgd trust coefficient (FBGEMM default)
};

// Width of one state tensor of a table with [rows, D] weights.
enum class StateWidth { kNone, kRow /* [rows] */, kFull /* [rows, D] */ };

struct OptimizerStateLayout {
  StateWidth momentum1 = StateWidth::kNone;
  StateWidth momentum2 = StateWidth::kNone;
  bool has_step = false;  // a per-table step counter t (bias corrections)
};

OptimizerStateLayout state_layout(FusedOptimizerKind kind);
// "sgd", "adagrad", "rowwise_adagrad", "adam", "lamb", "partial_rowwise_adam",
// "partial_rowwise_lamb", "lars_sgd", "adadelta", "rmsprop".
std::string optimizer_name(FusedOptimizerKind kind);
// Initial value of momentum1 (initial_accumulator_value for the adagrads, 0 otherwise); momentum2
// always starts at 0.
double initial_momentum1(const FusedOptimizerOptions& options);

// The per-step scalars shared by all rows of one table.
struct RowUpdateScalars {
  FusedOptimizerKind kind = FusedOptimizerKind::kSgd;
  float lr = 0, eps = 0, beta1 = 0, beta2 = 0, weight_decay = 0, momentum = 0, eta = 0;
  WeightDecayMode weight_decay_mode = WeightDecayMode::kNone;
  float inv_bias_correction1 = 1;  // 1 / (1 - beta1^t)
  float inv_bias_correction2 = 1;  // 1 / (1 - beta2^t)
};

// step: the table's step counter t (>= 1) for kinds with has_step; ignored otherwise.
RowUpdateScalars make_row_update_scalars(const FusedOptimizerOptions& options, double lr, int64_t step);

// Updates one row in place. w: [D] float32 weights; g: [D] the aggregated row gradient (scratch:
// may be overwritten); m1 / m2: the row's state ([D] for kFull, [1] for kRow, nullptr for kNone).
void apply_row_update(const RowUpdateScalars& s, int64_t D, float* w, float* g, float* m1, float* m2);

}  // namespace tzrec::embedding
