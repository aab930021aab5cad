// CapsuleLayer: MIND's behaviour-to-interest dynamic routing (TorchEasyRec's
// tzrec/modules/capsule.py, B2ICapsule). A user's history of low capsules [S, low_dim] is routed
// into at most max_k interest capsules [max_k, high_dim]:
//   inputs are truncated / zero-padded to max_seq_len items and masked by the history length;
//   interests per user: max_k (const_caps_num), else max(1, min(max_k, log2(length))) — capsule k
//   is valid when k < that number (a fraction counts: log2(6) = 2.58 gives 3 capsules);
//   low = inputs @ bilinear_matrix [low_dim, high_dim];
//   routing logits b [B, S, max_k]: N(0, 1) (routing_init_method "normal", a fresh draw every call,
//   never differentiated) or 0 ("zeros"), × routing_logits_stddev; then num_iters times:
//     b = min(b, +inf for valid capsules / −inf for the others); w = softmax(b · scale over k) ·
//     seq_mask; before the last iteration h = Σ_s w · low (detached) and b = w + h · normalize(low)
//     (detached), in the last h = Σ_s w · low and squash(h) = (|h|²/(1+|h|²))^squash_pow / |h| · h
//     with |h| clamped to ≥ 1e-7;
//   outputs h · capsule_mask [B, max_k, high_dim] and the capsule mask [B, max_k] bool.
// Parameter "bilinear_matrix" [low_dim, high_dim], initialised N(0, 1) as TorchEasyRec.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include <torch/torch.h>

namespace tzrec::nn {

struct CapsuleOptions {
  int64_t max_k = 5;
  int64_t max_seq_len = 0;
  int64_t high_dim = 0;
  int64_t num_iters = 3;
  double routing_logits_scale = 20.0;
  double routing_logits_stddev = 1.0;
  double squash_pow = 1.0;
  bool const_caps_num = false;
  bool normal_init = true;  // routing_init_method "normal"; false: "zeros"
};

class CapsuleLayerImpl : public torch::nn::Module {
 public:
  // Throws ConfigError at `path` for max_k, max_seq_len, high_dim or num_iters < 1.
  CapsuleLayerImpl(const CapsuleOptions& options, int64_t input_dim, const std::string& path = "capsule_config");
  // inputs [B, S, input_dim], seq_len [B] int64 → (interests [B, max_k, high_dim], mask [B, max_k] bool).
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& inputs, const torch::Tensor& seq_len);

  torch::Tensor bilinear_matrix;

 private:
  torch::Tensor squash(const torch::Tensor& x) const;
  CapsuleOptions options_;
};
TORCH_MODULE(CapsuleLayer);

}  // namespace tzrec::nn
