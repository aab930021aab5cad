#include "nn/sid/quantize_layer.h"

namespace tzrec::nn::sid {

QuantizeLayerImpl::QuantizeLayerImpl(int64_t n_embed, int64_t embed_dim) : n_embed_(n_embed), embed_dim_(embed_dim) {
  TORCH_CHECK(n_embed >= 1 && embed_dim >= 1, "quantize layer needs n_embed >= 1 and embed_dim >= 1, got ", n_embed,
              ", ", embed_dim);
}

std::pair<torch::Tensor, torch::Tensor> QuantizeLayerImpl::nearest_neighbors(const torch::Tensor& distances,
                                                                             int64_t topk) const {
  TORCH_CHECK(topk >= 1 && topk <= n_embed_, "topk must be in [1, ", n_embed_, "], got ", topk);
  auto [scores, ids] = torch::topk(distances, topk, /*dim=*/-1, /*largest=*/false);
  return {scores, ids};
}

QuantizeOutput QuantizeLayerImpl::topk_output(const torch::Tensor& distances, int64_t topk) const {
  auto [scores, ids] = nearest_neighbors(distances, topk);
  QuantizeOutput out;
  out.ids = ids.select(1, 0).contiguous();
  out.embeddings = lookup(out.ids);
  out.topk_ids = ids;
  out.topk_scores = scores;
  return out;
}

}  // namespace tzrec::nn::sid
