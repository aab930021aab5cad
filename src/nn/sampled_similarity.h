// The similarity of each user with its positive item and the sampled negatives, as one autograd
// node (TorchEasyRec's _sim_with_sampler without hard negatives, divided by the temperature):
//   out[b, 0] = alpha · <user_b, item_b>,  out[b, 1 + n] = alpha · <user_b, item_{B + n}>
// user [B, D], items [B + N, D] (the batch's positives, then the negatives) → [B, 1 + N].
// Forward writes both parts into one output (the negatives' GEMM straight into its columns, alpha
// applied by the GEMM); backward reads the two column blocks of the gradient in place. Same values
// as cat([sum(user · pos, 1), user @ negᵀ], 1) · alpha up to float rounding. Float32 without
// autocast only; other inputs take that plain expression.
#pragma once

#include <torch/torch.h>

namespace tzrec::nn {

torch::Tensor sampled_similarity(const torch::Tensor& user, const torch::Tensor& items, double alpha);

}  // namespace tzrec::nn
