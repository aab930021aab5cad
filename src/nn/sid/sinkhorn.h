// Sinkhorn-Knopp balanced assignment of the SID vector-quantize layers (TorchEasyRec
// tzrec/modules/sid/vector_quantize.py, _sinkhorn and _find_nearest_embedding): turns a distance
// matrix into a near doubly-stochastic assignment so that training spreads rows over the codebook.
//
// Single process: TorchEasyRec all-reduces the sums over ranks when a process group is up; SID
// models refuse distributed runs here (models/sid/sid_model.h), so the sums are local.
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace tzrec::nn::sid {

// cost: [B, K] non-negative (z-scored and shifted, see sinkhorn_codes) → Q [B, K]:
//   Q = exp(-cost · epsilon)ᵀ / (ΣQ + 1e-8), then `iters` times: rows (codes) normalised to sum
//   1/K, columns (inputs) to 1/B (each division adds 1e-8 to the sum), finally Q · B.
// No gradient (computed under NoGradGuard).
torch::Tensor sinkhorn(const torch::Tensor& cost, int64_t iters, double epsilon);

// The codes Sinkhorn assigns to distances [B, K]: z-score over all elements (population std,
// + 1e-12), shift to a minimum of 0, sinkhorn(), argmax per row → [B] int64.
torch::Tensor sinkhorn_codes(const torch::Tensor& distances, int64_t iters, double epsilon);

}  // namespace tzrec::nn::sid
