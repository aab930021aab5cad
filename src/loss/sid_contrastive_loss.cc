#include "loss/sid_contrastive_loss.h"

#include <cmath>
#include <limits>
#include <vector>

namespace tzrec::loss {
namespace {

const double kLogitScaleInit = std::log(1 / 0.07);
const double kLogitScaleMax = std::log(100.0);

double contrastive_fill_value(c10::ScalarType dtype) {
  switch (dtype) {
    case torch::kBFloat16:
      return static_cast<double>(std::numeric_limits<c10::BFloat16>::lowest());
    case torch::kHalf:
      return static_cast<double>(std::numeric_limits<c10::Half>::lowest());
    case torch::kFloat64:
      return std::numeric_limits<double>::lowest();
    default:
      return static_cast<double>(std::numeric_limits<float>::lowest());
  }
}

}  // namespace

SidContrastiveLossImpl::SidContrastiveLossImpl() {
  logit_scale_self = register_parameter("logit_scale_self", torch::ones({}) * kLogitScaleInit);
  logit_scale_cl = register_parameter("logit_scale_cl", torch::ones({}) * kLogitScaleInit);
  logit_scale_ori = register_parameter("logit_scale_ori", torch::ones({}) * kLogitScaleInit);
}

torch::Tensor SidContrastiveLossImpl::forward(const torch::Tensor& embed_a_in, const torch::Tensor& embed_b_in,
                                              const torch::Tensor& embed_a_ori, const torch::Tensor& embed_b_ori,
                                              const torch::Tensor& pair_mask, const RankRows* ranks) {
  namespace F = torch::nn::functional;
  auto scaled = [](const torch::Tensor& s) { return s.clamp_max(kLogitScaleMax).exp(); };
  const torch::Tensor scale_self = scaled(logit_scale_self);
  const torch::Tensor scale_ori = scaled(logit_scale_ori);
  const torch::Tensor scale_cl = scaled(logit_scale_cl);
  const int64_t b = embed_a_in.size(0);
  const torch::Tensor labels = torch::arange(b, torch::dtype(torch::kInt64).device(embed_a_in.device())) +
                               (ranks != nullptr ? ranks->offset : 0);
  const auto unit = F::NormalizeFuncOptions().p(2).dim(-1);
  const torch::Tensor a = F::normalize(embed_a_in, unit);
  const torch::Tensor bv = F::normalize(embed_b_in, unit);
  // The targets: this rank's rows, or every rank's — the four views and the pair mask in one
  // gather (side by side in their common dtype, each given back its own: exact both ways).
  torch::Tensor a_all = a, b_all = bv, a_ori_all = embed_a_ori, b_ori_all = embed_b_ori, mask_all = pair_mask;
  if (ranks != nullptr) {
    const std::vector<torch::Tensor> parts = {a, bv, embed_a_ori, embed_b_ori, pair_mask.unsqueeze(1)};
    c10::ScalarType common = parts[0].scalar_type();
    for (const torch::Tensor& p : parts) common = c10::promoteTypes(common, p.scalar_type());
    std::vector<torch::Tensor> side_by_side;
    std::vector<int64_t> widths;
    for (const torch::Tensor& p : parts) {
      side_by_side.push_back(p.to(common));
      widths.push_back(p.size(1));
    }
    const std::vector<torch::Tensor> gathered = ranks->rows(torch::cat(side_by_side, 1)).split_with_sizes(widths, 1);
    a_all = gathered[0].to(a.scalar_type());
    b_all = gathered[1].to(bv.scalar_type());
    a_ori_all = gathered[2].to(embed_a_ori.scalar_type());
    b_ori_all = gathered[3].to(embed_b_ori.scalar_type());
    mask_all = gathered[4].squeeze(1) > 0.5;
  }
  const torch::Tensor col_mask = mask_all.logical_not().unsqueeze(0);  // [1, B of all ranks]
  const torch::Tensor fallback = pair_mask.to(torch::kInt64).argmax();  // the first pair row
  const torch::Tensor safe_labels = torch::where(pair_mask, labels, fallback.expand_as(labels));
  const torch::Tensor mask_f = pair_mask.to(torch::kFloat32);
  const torch::Tensor n_valid = mask_f.sum().clamp_min(1);
  struct Group {
    const torch::Tensor& scale;
    const torch::Tensor& a_target;
    const torch::Tensor& b_target;
  };
  const Group groups[] = {
      {scale_self, b_all, a_all}, {scale_ori, b_ori_all, a_ori_all}, {scale_cl, a_ori_all, b_ori_all}};
  torch::Tensor loss = torch::zeros({}, a.options());
  for (const Group& g : groups) {
    torch::Tensor logits_a = torch::matmul(g.scale * a, g.a_target.t());
    torch::Tensor logits_b = torch::matmul(g.scale * bv, g.b_target.t());
    const double fill = contrastive_fill_value(logits_a.scalar_type());
    logits_a = logits_a.masked_fill(col_mask, fill);
    logits_b = logits_b.masked_fill(col_mask, fill);
    const auto ce = F::CrossEntropyFuncOptions().reduction(torch::kNone);
    torch::Tensor ce_a = torch::nan_to_num(F::cross_entropy(logits_a, safe_labels, ce), 0.0);
    torch::Tensor ce_b = torch::nan_to_num(F::cross_entropy(logits_b, safe_labels, ce), 0.0);
    loss = loss + ((ce_a + ce_b) * mask_f).sum() / (2 * n_valid);
  }
  return loss / 3;
}

}  // namespace tzrec::loss
