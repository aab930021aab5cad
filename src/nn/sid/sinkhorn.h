// Sinkhorn-Knopp balanced assignment of the SID vector-quantize layers (TorchEasyRec
// tzrec/modules/sid/vector_quantize.py, _sinkhorn and _find_nearest_embedding): turns a distance
// matrix into a near doubly-stochastic assignment so that training spreads rows over the codebook.
//
// On several ranks (`ranks` distributed) the total and the per-code sums are summed over the ranks
// and B counts every rank's rows, as TorchEasyRec all-reduces them: each rank gets its rows of the
// assignment of all ranks' rows together. (The z-score of sinkhorn_codes stays per rank, as there.)
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "nn/collectives.h"

namespace tzrec::nn::sid {

// cost: [B, K] non-negative (z-scored and shifted, see sinkhorn_codes) → Q [B, K]:
//   Q = exp(-cost · epsilon)ᵀ / (ΣQ + 1e-8), then `iters` times: rows (codes) normalised to sum
//   1/K, columns (inputs) to 1/B (each division adds 1e-8 to the sum), finally Q · B.
// No gradient (computed under NoGradGuard).
torch::Tensor sinkhorn(const torch::Tensor& cost, int64_t iters, double epsilon, const Collectives& ranks = {});

// The codes Sinkhorn assigns to distances [B, K]: z-score over all elements (population std,
// + 1e-12), shift to a minimum of 0, sinkhorn(), argmax per row → [B] int64.
torch::Tensor sinkhorn_codes(const torch::Tensor& distances, int64_t iters, double epsilon,
                             const Collectives& ranks = {});

}  // namespace tzrec::nn::sid
