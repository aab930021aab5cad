// HSTU multi-head attention on jagged sequences (TorchEasyRec's hstu_mha with the PyTorch kernel,
// pytorch_hstu_mha: the definition reproduced here), as a fused CPU kernel with its own backward.
//
// Tensors (L = total tokens; rows offsets[b] .. offsets[b+1] belong to sequence b):
//   q, k [L, H, A], v [L, H, V]: float32, or bfloat16 (computed in float32, results rounded to
//   bfloat16); any strides with a unit last dim. seq_offsets [B + 1], any integer dtype, CPU.
//   Result [L, H, V] in the dtype of q; gradients flow to q, k and v.
// Per sequence b of length n and head h, with Q, K [n, A] and V [n, V] its rows:
//   S = alpha · Q Kᵀ;  P = silu(S) / scaling_seqlen ⊙ M;  out = P V
// M [n, n] is the valid-attention mask of TorchEasyRec's _get_valid_attn_mask (causal; contextual
// rows attending to the whole history; target rows attending to the history and to themselves
// only; the max_attn_len window, lifted for the last min_full_attn_seq_len history rows), or,
// when attn_func is given, the Semi-Local Attention intervals it encodes (see
// build_sla_func_tensor) — exactly as pytorch_hstu_mha, which pads every sequence to
// max_seq_len: padded keys are zero there, so they add nothing, and only the n × n block matters.
//
// Never materialises a padded [B, H, N, N] tensor nor a whole n × n score matrix: each (sequence,
// head) runs over (query block × key block) tiles, skips the tiles the mask empties, evaluates the
// mask element by element only on tiles it cuts, and the backward recomputes the scores from q, k
// and v (nothing larger than the inputs is kept for it). Work items (b, h) are spread over
// at::get_num_threads() threads, longest sequences first; each is computed by one thread in a fixed
// order, so the result does not depend on the number of threads. Each thread keeps its float32
// scratch between calls: longest · (4 A + 3 V + 2 · block_size) + block_size² floats (≈ 2 MiB
// for 520 tokens, A = V = 128).
//
// Attention dropout is not supported: TorchEasyRec's STU always calls hstu_mha with dropout 0.
// Only causal attention exists, as TorchEasyRec asserts. Bad input (shapes, dtypes, offsets that
// decrease, num_targets outside [0, length], lengths over max_seq_len, negative options) is a
// programmer error: TORCH_CHECK with a message naming it.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace tzrec::nn {

struct HstuAttentionOptions {
  // N of TorchEasyRec's padded layout: every sequence length must be ≤ max_seq_len.
  int64_t max_seq_len = 0;
  double alpha = 1.0;
  // Divisor of silu(S); -1: max_seq_len.
  int64_t scaling_seqlen = -1;
  // Must be true (TorchEasyRec's hstu_mha asserts it).
  bool causal = true;
  // [B], any integer dtype, or undefined: no target rows.
  torch::Tensor num_targets;
  // 0: no attention window.
  int64_t max_attn_len = 0;
  int64_t contextual_seq_len = 0;
  // With max_attn_len > 0: the last min_full_attn_seq_len history rows attend without the window.
  int64_t min_full_attn_seq_len = 0;
  // [H, 3, L] int32 (any strides) or undefined: replaces the mask above by the Semi-Local Attention
  // intervals of build_sla_func_tensor (num_targets, max_attn_len, contextual_seq_len and
  // min_full_attn_seq_len are then unused, as in pytorch_hstu_mha).
  torch::Tensor attn_func;
  // Edge of the square tiles (a speed knob: values agree to rounding for any size ≥ 1).
  int64_t block_size = 64;
};

// The attention above: q, k [L, H, A], v [L, H, V], seq_offsets [B + 1] → [L, H, V].
torch::Tensor hstu_mha(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                       const torch::Tensor& seq_offsets, const HstuAttentionOptions& options);

// Tile products go to the BLAS that libtorch loaded (its sgemm_, looked up at run time), else to
// torch::mm. Tests only: false forces the torch::mm path; returns the previous setting.
bool set_hstu_blas_enabled(bool enabled);

// TorchEasyRec's build_sla_func_tensor: the Semi-Local Attention intervals [H, 3, total_q] int32
// (an expanded view, stride 0 over heads) of sequences seq_offsets [B + 1]. Row q at position p
// of its sequence (length n, t = num_targets[b] or 0, history end H_b = max(n − t, 0), k2 =
// max(sla_k2, contextual_seq_len)) attends to keys [0, c0) ∪ [c1, c2) with
//   history rows (p < H_b): c0 = min(k2, p + 1), c1 = max(k2, p − sla_k1 + 1), c2 = p + 1;
//   target rows:            c0 = c1 = c2 = H_b (the history only, not even themselves).
// sla_k1, sla_k2 and contextual_seq_len must be ≥ 0.
torch::Tensor build_sla_func_tensor(int64_t num_heads, int64_t sla_k1, int64_t sla_k2, const torch::Tensor& seq_offsets,
                                    int64_t total_q, const torch::Tensor& num_targets = {},
                                    int64_t contextual_seq_len = 0);

}  // namespace tzrec::nn
