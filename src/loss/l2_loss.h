// L2 loss (tzrec loss "l2_loss" = nn.MSELoss on the regression prediction "y";
// docs/tzrec-compatibility.md §7.1).
#pragma once

#include <torch/torch.h>

namespace tzrec::loss {

// preds: [B] float (raw model output, no sigmoid); labels: [B] numeric (cast to preds' dtype);
// sample_weights: [B] or undefined.
// Without weights: mean_b (p_b - y_b)². With weights: mean_b((p_b - y_b)² * w_b / mean(w)), where
// w / mean(w) is 0 wherever the division is not finite (tzrec's div_no_nan). Returns a scalar.
torch::Tensor l2_loss(const torch::Tensor& preds, const torch::Tensor& labels,
                      const torch::Tensor& sample_weights = {});

// w / mean(w) with non-finite entries set to 0: [B] → [B]. Shared by the weighted losses.
torch::Tensor normalize_sample_weights(const torch::Tensor& sample_weights, torch::ScalarType dtype);

}  // namespace tzrec::loss
