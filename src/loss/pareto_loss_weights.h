// Pareto-efficient loss weights for multi-task training (tzrec's ParetoEfficientMultiTaskLoss,
// after Lin et al., "A Pareto-Efficient Algorithm for Multiple Objective Optimization in
// E-Commerce Recommendation", RecSys 2019; docs/tzrec-compatibility.md §7.1 use_pareto_loss_weight).
//
// For K task losses with gradients g_1..g_K (over the shared trainable parameters) and lower
// bounds c_1..c_K (pareto_min_loss_weight, c_k >= 0, Σc < 1), the weights w = x + c solve
//     min_x ‖Σ_k (x_k + c_k) g_k‖²   subject to   Σ_k x_k = 1 − Σc,  x >= 0
// in two steps, as the reference does:
//   1. x̂ = the first K entries of the solution of the equality-constrained problem's KKT system
//          [ GGᵀ  1 ] [x̂]   [ −GGᵀc  ]
//          [ 1ᵀ   0 ] [λ] = [ 1 − Σc ]
//      (the minimum-norm least-squares solution: the reference's (MᵀM)⁻¹Mz when M is invertible,
//      and still defined when the gradients are linearly dependent);
//   2. x = the Euclidean projection of x̂ onto {x >= 0, Σx = 1 − Σc} (exact, by sorting; the
//      reference approximates the same projection with scipy's SLSQP).
// The weights are constants for the step: no gradient flows through them.
#pragma once

#include <vector>

#include <torch/torch.h>

namespace tzrec::loss {

// gram: [K, K] Gram matrix of the task gradients (gram[i][j] = g_i · g_j), any float dtype;
// min_weights: the K lower bounds. Returns the K weights (each >= its bound, summing to 1).
// Throws std::invalid_argument for mismatched sizes, a negative or non-finite bound, Σ bounds >= 1,
// or a non-finite Gram matrix.
std::vector<double> pareto_loss_weights(const torch::Tensor& gram, const std::vector<double>& min_weights);

// Euclidean projection of `v` onto the scaled simplex {x : x >= 0, Σx = total}, total > 0.
std::vector<double> project_onto_simplex(const std::vector<double>& v, double total);

}  // namespace tzrec::loss
