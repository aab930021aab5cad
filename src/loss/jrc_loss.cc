#include "loss/jrc_loss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "base/error.h"
#include "loss/l2_loss.h"

namespace tzrec::loss {
namespace {

// log Σ_{b: segment_b = s, include_b} exp(values_b) for s in [0, num_segments): [S]; −inf for a
// segment without included rows. values, segment, include: [B]. The per-segment max used for
// stability is detached (log-sum-exp's gradient does not depend on the shift).
torch::Tensor segment_logsumexp(const torch::Tensor& values, const torch::Tensor& segment, const torch::Tensor& include,
                                int64_t num_segments) {
  const double inf = std::numeric_limits<double>::infinity();
  torch::Tensor masked = values.masked_fill(~include, -inf);  // [B]
  // Per-segment max of the included values (0 for a segment without any), on the CPU.
  torch::Tensor v = masked.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  torch::Tensor seg = segment.to(torch::kCPU, torch::kInt64).contiguous();
  std::vector<double> max(static_cast<size_t>(num_segments), -inf);
  const double* vp = v.data_ptr<double>();
  const int64_t* sp = seg.data_ptr<int64_t>();
  for (int64_t b = 0; b < v.numel(); ++b) max[sp[b]] = std::max(max[sp[b]], vp[b]);
  for (double& m : max) m = std::isinf(m) ? 0.0 : m;
  torch::Tensor shift = torch::tensor(max, torch::kFloat64).to(values.device(), values.scalar_type());  // [S]
  torch::Tensor e = torch::exp(masked - shift.index_select(0, segment));                 // [B], 0 where excluded
  torch::Tensor sum = torch::zeros({num_segments}, values.options()).index_add(0, segment, e);  // [S]
  torch::Tensor has_any = sum > 0;
  torch::Tensor safe = torch::where(has_any, sum, torch::ones_like(sum));
  return torch::where(has_any, torch::log(safe) + shift, torch::full_like(sum, -inf));
}

}  // namespace

JrcLoss::JrcLoss(JrcLossOptions options) : options_(options) {
  if (!(options_.alpha >= 0.0 && options_.alpha <= 1.0)) {
    throw ConfigError(fmt::format("jrc_loss.alpha: must be in [0, 1], got {}", options_.alpha));
  }
}

torch::Tensor JrcLoss::per_sample(const torch::Tensor& logits, const torch::Tensor& labels,
                                  const torch::Tensor& session_ids) const {
  TORCH_CHECK(logits.dim() == 2 && logits.size(1) == 2, "jrc_loss: logits must be [B, 2], got ", logits.sizes());
  const int64_t batch = logits.size(0);
  TORCH_CHECK(labels.dim() == 1 && labels.size(0) == batch, "jrc_loss: labels ", labels.sizes(),
              " do not match logits ", logits.sizes());
  TORCH_CHECK(session_ids.numel() == batch, "jrc_loss: ", session_ids.numel(), " session ids for ", batch, " rows");
  TORCH_CHECK(labels.scalar_type() == torch::kInt64, "jrc_loss: labels must be int64 class ids");
  namespace F = torch::nn::functional;
  torch::Tensor ce = F::cross_entropy(logits, labels, F::CrossEntropyFuncOptions().reduction(torch::kNone));  // [B]
  if (batch == 0) return ce;
  // Dense session index in [0, S) per row.
  auto [unique, inverse, counts] =
      torch::_unique2(session_ids.reshape({-1}).to(torch::kInt64), /*sorted=*/true, /*return_inverse=*/true);
  const int64_t num_sessions = unique.size(0);
  torch::Tensor segment = inverse.to(logits.device());
  torch::Tensor is_pos = labels == 1;                                // [B]
  torch::Tensor z_neg = logits.select(1, 0), z_pos = logits.select(1, 1);  // [B]
  // A positive's competitors: the session's negatives on the positive logit; a negative's: the
  // session's positives on the negative logit.
  torch::Tensor lse_negatives = segment_logsumexp(z_pos, segment, ~is_pos, num_sessions);  // [S]
  torch::Tensor lse_positives = segment_logsumexp(z_neg, segment, is_pos, num_sessions);   // [S]
  torch::Tensor ge = torch::where(is_pos, F::softplus(lse_negatives.index_select(0, segment) - z_pos),
                                  F::softplus(lse_positives.index_select(0, segment) - z_neg));  // [B]
  return options_.alpha * ce + (1.0 - options_.alpha) * ge;
}

torch::Tensor JrcLoss::operator()(const torch::Tensor& logits, const torch::Tensor& labels,
                                  const torch::Tensor& session_ids, const torch::Tensor& sample_weights) const {
  torch::Tensor loss = per_sample(logits, labels, session_ids);  // [B]
  if (!sample_weights.defined()) return loss.mean();
  TORCH_CHECK(sample_weights.numel() == loss.numel(), "jrc_loss: sample weights ", sample_weights.sizes(),
              " do not match logits ", logits.sizes());
  return (loss * normalize_sample_weights(sample_weights.reshape({-1}), loss.scalar_type())).mean();
}

}  // namespace tzrec::loss
