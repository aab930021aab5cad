#include "nn/gr/stu.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <mutex>

#include "base/simd_clones.h"
#include "base/stable_hash.h"
#include "nn/hstu_attention.h"

namespace tzrec::nn::gr {

namespace {

constexpr double kNormEps = 1e-6;

// out[i] = scale when bits 32..63 of splitmix64(seed + i · golden) ≥ threshold, else 0.
TZREC_SIMD_CLONES void fill_dropout_noise(float* out, int64_t begin, int64_t end, uint64_t seed, uint64_t threshold,
                                          float scale) {
  for (int64_t i = begin; i < end; ++i) {
    const uint64_t z = mix64(seed + static_cast<uint64_t>(i) * kGolden64);
    out[i] = (z >> 32) >= threshold ? scale : 0.0f;
  }
}

// Dropout's multiplier [sizes] float32: 0 with probability p, else 1 / (1 − p). torch::dropout
// draws its Bernoulli mask element by element on one thread (a third of the layer's
// non-attention time at 35k × 768); this hashes (seed, index) on all threads instead, with the
// seed taken from torch's default generator, so torch::manual_seed still fixes the mask and the
// thread count does not change it.
torch::Tensor dropout_noise(at::IntArrayRef sizes, double p) {
  torch::Tensor noise = torch::empty(sizes, torch::kFloat32);
  uint64_t seed;
  {
    at::Generator gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    seed = gen.get<at::CPUGeneratorImpl>()->random64();
  }
  const uint64_t threshold = static_cast<uint64_t>(std::ldexp(p, 32));
  const float scale = static_cast<float>(1.0 / (1.0 - p));
  float* out = noise.data_ptr<float>();
  at::parallel_for(0, noise.numel(), 1 << 16,
                   [&](int64_t begin, int64_t end) { fill_dropout_noise(out, begin, end, seed, threshold, scale); });
  return noise;
}

}  // namespace

STULayerImpl::STULayerImpl(const STUOptions& options) : options_(options) {
  const STUOptions& o = options_;
  TORCH_CHECK(o.embedding_dim > 0 && o.num_heads > 0 && o.hidden_dim > 0 && o.attention_dim > 0,
              "STULayer: embedding_dim, num_heads, hidden_dim and attention_dim must be positive, got ",
              o.embedding_dim, ", ", o.num_heads, ", ", o.hidden_dim, ", ", o.attention_dim);
  TORCH_CHECK(o.output_dropout_ratio >= 0.0 && o.output_dropout_ratio < 1.0,
              "STULayer: output_dropout_ratio must be in [0, 1), got ", o.output_dropout_ratio);
  TORCH_CHECK(o.max_attn_len >= 0 && o.contextual_seq_len >= 0 && o.sla_k1 >= 0 && o.sla_k2 >= 0,
              "STULayer: max_attn_len, contextual_seq_len, sla_k1 and sla_k2 must be ≥ 0");
  TORCH_CHECK(o.scaling_seqlen == -1 || o.scaling_seqlen > 0, "STULayer: scaling_seqlen must be -1 or positive, got ",
              o.scaling_seqlen);
  TORCH_CHECK(o.causal, "STULayer: only causal attention is supported");
  // TorchEasyRec: `attn_alpha or 1 / sqrt(attention_dim)`, so 0 means the default too.
  attn_alpha_ = o.attn_alpha != 0.0 ? o.attn_alpha : 1.0 / std::sqrt(static_cast<double>(o.attention_dim));
  const int64_t H = o.num_heads;
  const int64_t uvqk_width = (o.hidden_dim * 2 + o.attention_dim * 2) * H;
  uvqk_weight_ = register_parameter("_uvqk_weight", torch::empty({o.embedding_dim, uvqk_width}));
  uvqk_beta_ = register_parameter("_uvqk_beta", torch::zeros({uvqk_width}));
  input_norm_weight_ = register_parameter("_input_norm_weight", torch::ones({o.embedding_dim}));
  input_norm_bias_ = register_parameter("_input_norm_bias", torch::zeros({o.embedding_dim}));
  output_weight_ = register_parameter("_output_weight", torch::empty({o.hidden_dim * H * 3, o.embedding_dim}));
  const int64_t output_norm_dim = o.use_group_norm ? H : o.hidden_dim * H;
  output_norm_weight_ = register_parameter("_output_norm_weight", torch::ones({output_norm_dim}));
  output_norm_bias_ = register_parameter("_output_norm_bias", torch::zeros({output_norm_dim}));
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(uvqk_weight_);
  torch::nn::init::xavier_uniform_(output_weight_);
}

torch::Tensor STULayerImpl::forward(const torch::Tensor& x, const torch::Tensor& x_offsets, int64_t max_seq_len,
                                    const torch::Tensor& num_targets) {
  const STUOptions& o = options_;
  const int64_t H = o.num_heads, hidden = o.hidden_dim, attn_dim = o.attention_dim;
  TORCH_CHECK(x.dim() == 2 && x.size(1) == o.embedding_dim, "STULayer: x must be [L, ", o.embedding_dim, "], got ",
              x.sizes());
  const auto dtype = x.scalar_type();
  const auto f32 = torch::kFloat32;

  // Input: float32 layer norm, then one projection split into u, v, q, k (hstu_compute_uqvk).
  const torch::Tensor normed =
      torch::layer_norm(x.to(f32), {o.embedding_dim}, input_norm_weight_.to(f32), input_norm_bias_.to(f32), kNormEps)
          .to(dtype);
  const torch::Tensor uvqk = torch::addmm(uvqk_beta_.to(dtype), normed, uvqk_weight_.to(dtype));
  const std::vector<torch::Tensor> parts =
      uvqk.split_with_sizes({hidden * H, hidden * H, attn_dim * H, attn_dim * H}, 1);
  const torch::Tensor u = torch::silu(parts[0]);
  const torch::Tensor v = parts[1].view({-1, H, hidden});
  const torch::Tensor q = parts[2].view({-1, H, attn_dim});
  const torch::Tensor k = parts[3].view({-1, H, attn_dim});

  nn::HstuAttentionOptions ao;
  ao.max_seq_len = max_seq_len;
  ao.alpha = attn_alpha_;
  ao.scaling_seqlen = o.scaling_seqlen;
  ao.causal = o.causal;
  const torch::Tensor targets = o.target_aware ? num_targets : torch::Tensor();
  if (o.sla_k1 > 0 || o.sla_k2 > 0) {
    ao.attn_func =
        nn::build_sla_func_tensor(H, o.sla_k1, o.sla_k2, x_offsets, x.size(0), targets, o.contextual_seq_len);
  } else {
    ao.num_targets = targets;
    ao.max_attn_len = o.max_attn_len;
    ao.contextual_seq_len = o.contextual_seq_len;
  }
  const torch::Tensor attn = nn::hstu_mha(q, k, v, x_offsets, ao).view({-1, H * hidden});

  // Output (hstu_compute_output): float32 norm of the attention, gated by u, next to u and the
  // attention themselves, dropout, projection plus the residual.
  const torch::Tensor a32 = attn.to(f32), u32 = u.to(f32);
  torch::Tensor normed_attn;
  if (o.use_group_norm) {
    normed_attn = torch::group_norm(a32.view({-1, H, hidden}), H, output_norm_weight_.to(f32),
                                    output_norm_bias_.to(f32), kNormEps)
                      .view({-1, H * hidden});
  } else {
    normed_attn =
        torch::layer_norm(a32, {H * hidden}, output_norm_weight_.to(f32), output_norm_bias_.to(f32), kNormEps);
  }
  torch::Tensor y = torch::cat({u32, a32, u32 * normed_attn}, 1);
  if (is_training() && o.output_dropout_ratio > 0.0) y = y * dropout_noise(y.sizes(), o.output_dropout_ratio);
  y = y.to(dtype);
  return torch::addmm(x, y, output_weight_.to(dtype));
}

STUTruncationPlan compute_stu_truncation_plan(const torch::Tensor& x_offsets, const torch::Tensor& num_targets,
                                              int64_t max_seq_len, int64_t truncate_tail_len,
                                              int64_t contextual_seq_len) {
  TORCH_CHECK(truncate_tail_len >= 0, "compute_stu_truncation_plan: truncate_tail_len must be ≥ 0, got ",
              truncate_tail_len);
  TORCH_CHECK(contextual_seq_len >= 0, "compute_stu_truncation_plan: contextual_seq_len must be ≥ 0, got ",
              contextual_seq_len);
  TORCH_CHECK(x_offsets.dim() == 1 && x_offsets.size(0) >= 1, "compute_stu_truncation_plan: x_offsets must be [B + 1]");
  const torch::Tensor off_t = x_offsets.to(torch::kCPU, torch::kInt64).contiguous();
  const int64_t* off = off_t.data_ptr<int64_t>();
  const int64_t B = off_t.size(0) - 1;
  torch::Tensor t_t;
  if (num_targets.defined()) {
    TORCH_CHECK(num_targets.dim() == 1 && num_targets.size(0) == B,
                "compute_stu_truncation_plan: num_targets must be [B]");
    t_t = num_targets.to(torch::kCPU, torch::kInt64).contiguous();
  }
  STUTruncationPlan plan;
  plan.pre_max_seq_len = max_seq_len;
  plan.contextual_seq_len = contextual_seq_len;
  plan.new_lengths = torch::empty({B}, torch::kInt64);
  plan.new_x_offsets = torch::empty({B + 1}, torch::kInt64);
  int64_t* lengths = plan.new_lengths.data_ptr<int64_t>();
  int64_t* new_off = plan.new_x_offsets.data_ptr<int64_t>();
  std::vector<int64_t> kept;
  kept.reserve(static_cast<size_t>(off[B] - off[0]));
  new_off[0] = 0;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = off[b + 1] - off[b];
    TORCH_CHECK(n >= 0, "compute_stu_truncation_plan: x_offsets decrease at ", b);
    const int64_t history = n - contextual_seq_len - (t_t.defined() ? t_t.data_ptr<int64_t>()[b] : 0);
    // TorchEasyRec: drop = U − min(U, T), which is 0 for a negative U.
    const int64_t drop = history - std::min(history, truncate_tail_len);
    for (int64_t r = 0; r < std::min(contextual_seq_len, n); ++r) kept.push_back(off[b] + r);
    for (int64_t r = contextual_seq_len + drop; r < n; ++r) kept.push_back(off[b] + r);
    lengths[b] = n - drop;
    new_off[b + 1] = new_off[b] + lengths[b];
    plan.new_max_seq_len = std::max(plan.new_max_seq_len, lengths[b]);
  }
  plan.kept_rows = torch::tensor(kept, torch::kInt64);
  return plan;
}

torch::Tensor apply_stu_truncation_plan(const torch::Tensor& x, const STUTruncationPlan& plan) {
  return x.index_select(0, plan.kept_rows.to(x.device()));
}

STUStackImpl::STUStackImpl(const std::vector<STUOptions>& layers, int64_t truncate_split_layer,
                           int64_t truncate_tail_len)
    : truncate_split_layer_(truncate_split_layer), truncate_tail_len_(truncate_tail_len) {
  TORCH_CHECK(truncate_split_layer >= 0 && truncate_tail_len >= 0,
              "STUStack: truncate_split_layer and truncate_tail_len must be ≥ 0, got ", truncate_split_layer, ", ",
              truncate_tail_len);
  TORCH_CHECK((truncate_split_layer > 0) == (truncate_tail_len > 0),
              "STUStack: truncate_split_layer and truncate_tail_len must both be > 0 (truncation) or both 0, got ",
              truncate_split_layer, ", ", truncate_tail_len);
  TORCH_CHECK(truncate_tail_len == 0 || truncate_split_layer < static_cast<int64_t>(layers.size()),
              "STUStack: truncate_split_layer must be in (0, ", layers.size(), "), got ", truncate_split_layer);
  auto list = register_module("_stu_layers", torch::nn::ModuleList());
  for (const STUOptions& o : layers) {
    layers_.emplace_back(o);
    list->push_back(layers_.back());
  }
}

STUStackOutput STUStackImpl::forward(const torch::Tensor& x, const torch::Tensor& x_offsets, int64_t max_seq_len,
                                     const torch::Tensor& num_targets) {
  STUStackOutput out;
  out.x = x;
  out.x_offsets = x_offsets.to(torch::kInt64);
  out.max_seq_len = max_seq_len;
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (truncate_tail_len_ > 0 && static_cast<int64_t>(i) == truncate_split_layer_) {
      out.plan = compute_stu_truncation_plan(out.x_offsets, num_targets, out.max_seq_len, truncate_tail_len_,
                                             layers_[i]->options().contextual_seq_len);
      out.x = apply_stu_truncation_plan(out.x, *out.plan);
      out.x_offsets = out.plan->new_x_offsets;
      out.max_seq_len = out.plan->new_max_seq_len;
    }
    out.x = layers_[i]->forward(out.x, out.x_offsets, out.max_seq_len, num_targets);
  }
  return out;
}

}  // namespace tzrec::nn::gr
