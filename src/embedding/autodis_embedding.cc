#include "embedding/autodis_embedding.h"

#include <cmath>

namespace tzrec::embedding {

AutoDisEmbeddingImpl::AutoDisEmbeddingImpl(std::vector<std::string> feature_names, int64_t embedding_dim,
                                           int64_t num_channels, double temperature, double keep_prob)
    : feature_names_(std::move(feature_names)),
      embedding_dim_(embedding_dim),
      num_channels_(num_channels),
      temperature_(temperature),
      keep_prob_(keep_prob) {
  TORCH_CHECK(!feature_names_.empty() && embedding_dim_ > 0 && num_channels_ > 0,
              "AutoDisEmbedding: needs features, embedding_dim > 0 and num_channels > 0");
  const int64_t c = num_channels_;
  // TorchEasyRec's reset_parameters: normal(0, 1), normal(0, sqrt(2 / (1 + C))), normal(0, sqrt(1 / C)).
  const double proj_w_std = std::sqrt(2.0 / static_cast<double>(1 + c));
  const double proj_m_std = std::sqrt(1.0 / static_cast<double>(c));
  torch::NoGradGuard no_grad;
  for (const std::string& f : feature_names_) {
    meta_emb_.push_back(register_module("meta_emb_" + f, FeatureWeight(torch::randn({c, embedding_dim_}))));
    proj_w_.push_back(register_module("proj_w_" + f, FeatureWeight(torch::randn({c}) * proj_w_std)));
    proj_m_.push_back(register_module("proj_m_" + f, FeatureWeight(torch::randn({c, c}) * proj_m_std)));
  }
}

torch::Tensor AutoDisEmbeddingImpl::forward(const torch::Tensor& dense_input) {
  const auto n = static_cast<int64_t>(feature_names_.size());
  TORCH_CHECK(dense_input.dim() == 2 && dense_input.size(1) == n, "AutoDisEmbedding: input must be [B, ", n,
              "], got ", dense_input.sizes());
  const torch::Tensor proj_w = stack_weights(proj_w_);      // [N, C]
  const torch::Tensor proj_m = stack_weights(proj_m_);      // [N, C, C]
  const torch::Tensor meta_emb = stack_weights(meta_emb_);  // [N, C, D]
  const torch::Tensor hidden = torch::leaky_relu(torch::einsum("nc,bn->bnc", {proj_w, dense_input}));  // [B, N, C]
  const torch::Tensor x_bar = torch::einsum("nij,bnj->bni", {proj_m, hidden}) + keep_prob_ * hidden;  // [B, N, C]
  const torch::Tensor x_hat = torch::softmax(x_bar / temperature_, -1);                                 // [B, N, C]
  const torch::Tensor emb = torch::einsum("ncd,bnc->bnd", {meta_emb, x_hat});                           // [B, N, D]
  return emb.reshape({-1, n * embedding_dim_});
}

}  // namespace tzrec::embedding
