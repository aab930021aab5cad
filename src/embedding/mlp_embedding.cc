#include "embedding/mlp_embedding.h"

#include <cmath>

namespace tzrec::embedding {

MLPEmbeddingImpl::MLPEmbeddingImpl(std::vector<std::string> feature_names, int64_t embedding_dim, int64_t value_dim)
    : feature_names_(std::move(feature_names)), embedding_dim_(embedding_dim), value_dim_(value_dim) {
  TORCH_CHECK(!feature_names_.empty() && embedding_dim_ > 0 && value_dim_ > 0,
              "MLPEmbedding: needs features, embedding_dim > 0 and value_dim > 0");
  TORCH_CHECK(value_dim_ == 1 || feature_names_.size() == 1,
              "MLPEmbedding: a feature with value_dim > 1 is embedded on its own");
  torch::NoGradGuard no_grad;
  if (value_dim_ == 1) {
    const double stddev = std::sqrt(2.0 / static_cast<double>(1 + embedding_dim_));
    for (const std::string& f : feature_names_) {
      proj_w_.push_back(register_module("proj_w_" + f, FeatureWeight(torch::randn({embedding_dim_}) * stddev)));
    }
  } else {
    const double stddev = std::sqrt(2.0 / static_cast<double>(value_dim_ + embedding_dim_));
    proj_w_.push_back(register_module("proj_w_" + feature_names_[0],
                                      FeatureWeight(torch::randn({value_dim_, embedding_dim_}) * stddev)));
  }
}

torch::Tensor MLPEmbeddingImpl::forward(const torch::Tensor& dense_input) {
  const auto n = static_cast<int64_t>(feature_names_.size());
  const int64_t width = value_dim_ == 1 ? n : value_dim_;
  TORCH_CHECK(dense_input.dim() == 2 && dense_input.size(1) == width, "MLPEmbedding: input must be [B, ", width,
              "], got ", dense_input.sizes());
  if (value_dim_ > 1) return torch::einsum("vi,bv->bi", {proj_w_[0]->weight, dense_input});  // [B, D]
  const torch::Tensor proj_w = stack_weights(proj_w_);                                       // [N, D]
  return torch::einsum("ni,bn->bni", {proj_w, dense_input}).reshape({-1, n * embedding_dim_});
}

}  // namespace tzrec::embedding
