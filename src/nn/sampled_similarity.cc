#include "nn/sampled_similarity.h"

#include <ATen/autocast_mode.h>

namespace tzrec::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class SampledSimilarityFunction : public torch::autograd::Function<SampledSimilarityFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& user, const torch::Tensor& items,
                               double alpha) {
    const int64_t b = user.size(0), n = items.size(0) - b;
    torch::Tensor out = torch::empty({b, 1 + n}, user.options());
    torch::Tensor pos_col = out.narrow(1, 0, 1);
    pos_col.copy_((user * items.narrow(0, 0, b)).sum(1, /*keepdim=*/true).mul_(alpha));
    if (n > 0) {
      torch::Tensor neg_cols = out.narrow(1, 1, n);  // rows of stride 1 + N: the GEMM writes in place
      at::addmm_out(neg_cols, neg_cols, user, items.narrow(0, b, n).t(), /*beta=*/0, /*alpha=*/alpha);
    }
    ctx->save_for_backward({user, items});
    ctx->saved_data["alpha"] = alpha;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& user = saved[0];
    const torch::Tensor& items = saved[1];
    const double alpha = ctx->saved_data["alpha"].toDouble();
    const torch::Tensor g = grads[0].stride(1) == 1 ? grads[0] : grads[0].contiguous();  // [B, 1 + N]
    const int64_t b = user.size(0), n = items.size(0) - b;
    const torch::Tensor g_pos = g.narrow(1, 0, 1) * alpha;  // [B, 1]
    const torch::Tensor pos = items.narrow(0, 0, b);
    torch::Tensor grad_user = pos * g_pos;
    torch::Tensor grad_items = torch::empty_like(items);
    grad_items.narrow(0, 0, b).copy_(user * g_pos);
    if (n > 0) {
      const torch::Tensor g_neg = g.narrow(1, 1, n);  // [B, N], row stride 1 + N
      grad_user.addmm_(g_neg, items.narrow(0, b, n), /*beta=*/1, /*alpha=*/alpha);
      // The negatives' gradient g_negᵀ · user [N, D] as the transpose of userᵀ · g_neg [D, N]:
      // OpenBLAS runs this shape (K = B, small output) about a third faster in that orientation
      // (bench/README.md, DSSM); the [D, N] result is small to transpose.
      torch::Tensor grad_neg_t = torch::empty({user.size(1), n}, user.options());
      at::addmm_out(grad_neg_t, grad_neg_t, user.t(), g_neg, /*beta=*/0, /*alpha=*/alpha);
      grad_items.narrow(0, b, n).copy_(grad_neg_t.t());
    }
    return {grad_user, grad_items, torch::Tensor()};
  }
};

}  // namespace

torch::Tensor sampled_similarity(const torch::Tensor& user, const torch::Tensor& items, double alpha) {
  const int64_t b = user.size(0);
  TORCH_CHECK(items.size(0) >= b, "sampled_similarity: ", items.size(0), " items for ", b, " users");
  if (user.scalar_type() == torch::kFloat && items.scalar_type() == torch::kFloat &&
      !at::autocast::is_cpu_enabled() && user.is_contiguous() && items.is_contiguous()) {
    return SampledSimilarityFunction::apply(user, items, alpha);
  }
  torch::Tensor pos = (user * items.narrow(0, 0, b)).sum(-1, /*keepdim=*/true);
  torch::Tensor neg = torch::mm(user, items.narrow(0, b, items.size(0) - b).t());
  return torch::cat({pos, neg}, -1) * alpha;
}

}  // namespace tzrec::nn
