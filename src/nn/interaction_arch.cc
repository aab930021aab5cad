#include "nn/interaction_arch.h"

namespace tzrec::nn {

InteractionArchImpl::InteractionArchImpl(int64_t feature_num) : feature_num_(feature_num) {
  TORCH_CHECK(feature_num >= 1, "InteractionArch: feature_num must be >= 1, got ", feature_num);
  // Same pairs and order as torch.triu_indices(N, N, offset=1): row by row, columns ascending.
  torch::Tensor triu = torch::triu_indices(feature_num, feature_num, 1);  // [2, P]
  flat_index_ = (triu[0] * feature_num + triu[1]).contiguous();
}

torch::Tensor InteractionArchImpl::forward(const torch::Tensor& features) {
  TORCH_CHECK(features.dim() == 3 && features.size(1) == feature_num_, "InteractionArch expects [B, ",
              feature_num_, ", D], got ", features.sizes());
  torch::Tensor interactions = torch::bmm(features, features.transpose(1, 2));  // [B, N, N]
  if (flat_index_.device() != features.device()) flat_index_ = flat_index_.to(features.device());
  return interactions.flatten(1).index_select(1, flat_index_);  // [B, N(N−1)/2]
}

}  // namespace tzrec::nn
