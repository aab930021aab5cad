// Jagged 2-D tensors of the generative models (TorchEasyRec's tzrec/ops/jagged_tensors.py, the
// PyTorch definitions): values [L, D] whose rows offsets[b] .. offsets[b+1] belong to sequence b,
// offsets [B + 1] int64 on the CPU. Every function is differentiable (index_select / index_add
// underneath) and never pads to [B, max_len, D].
#pragma once

#include <cstdint>
#include <utility>

#include <torch/torch.h>

namespace tzrec::nn::gr {

// [B + 1] int64: 0, L0, L0 + L1, ... from lengths [B] (any integer dtype).
torch::Tensor complete_cumsum(const torch::Tensor& lengths);
// [B + 1] int64: 0, n, 2n, ... — sequences of one fixed length n (TorchEasyRec's offsets=None).
torch::Tensor fixed_offsets(int64_t batch_size, int64_t n);
// [B] int64 lengths from offsets [B + 1].
torch::Tensor offsets_to_lengths(const torch::Tensor& offsets);

// Per sequence b: its left rows, then its right rows → [L_left + L_right, D]
// (concat_2D_jagged). offsets_left / offsets_right: [B + 1].
torch::Tensor concat_2d_jagged(const torch::Tensor& values_left, const torch::Tensor& values_right,
                               const torch::Tensor& offsets_left, const torch::Tensor& offsets_right);

// The inverse: values [L, D] whose sequence b holds lengths_left[b] rows then lengths_right[b]
// rows → (left [Σ lengths_left, D], right [Σ lengths_right, D]) (split_2D_jagged).
std::pair<torch::Tensor, torch::Tensor> split_2d_jagged(const torch::Tensor& values, const torch::Tensor& offsets_left,
                                                        const torch::Tensor& offsets_right);

// Per sequence b: jagged rows [L_b, Din] @ dense[b] [Din, Dout] + bias[b] [Dout] → [L, Dout]
// (jagged_dense_bmm_broadcast_add), computed in float32 and returned in jagged's dtype.
torch::Tensor jagged_dense_bmm_broadcast_add(const torch::Tensor& seq_offsets, const torch::Tensor& jagged,
                                             const torch::Tensor& dense, const torch::Tensor& bias);

// Row indices [L] int64 of sequence b for every row of a jagged tensor with these offsets.
torch::Tensor row_sequence_ids(const torch::Tensor& offsets);

}  // namespace tzrec::nn::gr
