#include "nn/sid/residual_vector_quantizer.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"

namespace tzrec::nn::sid {

std::vector<torch::Tensor> residual_kmeans(const torch::Tensor& samples, const std::vector<int64_t>& n_clusters,
                                           const KMeansOptions& options) {
  torch::NoGradGuard no_grad;
  torch::Tensor x = samples.detach().to(torch::kCPU, torch::kFloat32).clone();
  std::vector<torch::Tensor> centers;
  for (int64_t k : n_clusters) {
    KMeansResult fit = kmeans_fit(x, k, options);
    const torch::Tensor ids = kmeans_search(x, fit.centroids, options.spherical).first;
    x -= fit.centroids.index_select(0, ids);
    centers.push_back(fit.centroids.to(samples.device()));
  }
  return centers;
}

torch::Tensor rotation_trick(const torch::Tensor& x, const torch::Tensor& quant) {
  const torch::Tensor q = quant.detach();
  const torch::Tensor xd = x.detach();
  const torch::Tensor q_norms = torch::linalg_vector_norm(q, 2, {-1}).unsqueeze(1);
  const torch::Tensor x_norms = torch::linalg_vector_norm(xd, 2, {-1}).unsqueeze(1);
  const torch::Tensor lambda = q_norms / (x_norms + 1e-8);
  const torch::Tensor x_hat = xd / (x_norms + 1e-8);
  const torch::Tensor q_hat = q / (q_norms + 1e-8);
  namespace F = torch::nn::functional;
  const torch::Tensor r = F::normalize(x_hat + q_hat, F::NormalizeFuncOptions().p(2).dim(1));
  const torch::Tensor x_unsq = x.unsqueeze(1);  // [B, 1, D]
  const torch::Tensor projection = torch::matmul(torch::matmul(x_unsq, r.unsqueeze(2)), r.unsqueeze(1));
  const torch::Tensor rescaled = torch::matmul(torch::matmul(x_unsq, x_hat.unsqueeze(2)), q_hat.unsqueeze(1));
  return lambda * (x_unsq - 2 * projection + 2 * rescaled).squeeze(1);
}

ResidualVectorQuantizerImpl::ResidualVectorQuantizerImpl(ResidualVectorQuantizerOptions options,
                                                         const std::string& config_path)
    : ResidualQuantizerImpl(options.embed_dim, options.n_embed, options.normalize_residuals, options.candidate,
                            config_path),
      options_(std::move(options)) {
  initted = register_buffer("initted", torch::tensor({!options_.kmeans_init}));
  const bool gumbel = options_.forward_mode == ForwardMode::kGumbelSoftmax;
  if (gumbel && options_.use_sinkhorn) {
    log::warning("{}: forward_mode gumbel_softmax turns off the Sinkhorn assignment (the two do not combine)",
                 config_path);
    options_.use_sinkhorn = false;
  }
  if (gumbel && options_.rotation_trick) {
    log::warning(
        "{}.rotation_trick: has no effect with forward_mode gumbel_softmax (no straight-through "
        "estimator to rotate)",
        config_path);
  }
  for (size_t i = 0; i < options_.n_embed.size(); ++i) {
    VectorQuantizeOptions layer;
    layer.embed_dim = options_.embed_dim;
    layer.n_embed = options_.n_embed[i];
    layer.forward_mode = options_.forward_mode;
    layer.distance = options_.distance;
    layer.use_sinkhorn = options_.use_sinkhorn;
    layer.sinkhorn_iters = options_.sinkhorn_iters;
    layer.sinkhorn_epsilon = options_.sinkhorn_epsilon;
    layer.gumbel_temperature = options_.gumbel_temperature;
    add_layer(std::make_shared<VectorQuantizeLayerImpl>(layer, config_path));
  }
}

void ResidualVectorQuantizerImpl::set_collectives(std::shared_ptr<const Collectives> ranks) {
  ranks_ = std::move(ranks);
  for (size_t i = 0; i < options_.n_embed.size(); ++i) static_cast<VectorQuantizeLayerImpl&>(layer(i)).set_collectives(ranks_);
}

void ResidualVectorQuantizerImpl::init_embed(const torch::Tensor& data) {
  if (initted.item<bool>()) return;
  torch::NoGradGuard no_grad;
  const int64_t max_k = *std::max_element(options_.n_embed.begin(), options_.n_embed.end());
  // Rank 0's batch decides (its verdict is sent first, so that no rank waits for codebooks that
  // never come).
  torch::Tensor rows = torch::tensor({data.size(0)}, torch::kInt64);
  if (ranks_->distributed()) ranks_->broadcast(rows, 0);
  if (rows.item<int64_t>() < max_k) {
    throw DataError(fmt::format("kmeans_init: the first training batch{} has {} rows, fewer than the largest codebook "
                                "({}); raise data_config.batch_size or turn kmeans_init off",
                                ranks_->distributed() ? " of rank 0" : "", rows.item<int64_t>(), max_k));
  }
  std::vector<torch::Tensor> centers;
  if (ranks_->rank == 0) {
    KMeansOptions km;
    km.niter = 10;
    km.seed = 123;
    centers = residual_kmeans(data, options_.n_embed, km);
  } else {
    for (int64_t k : options_.n_embed) centers.push_back(torch::empty({k, options_.embed_dim}, torch::kFloat32));
  }
  for (size_t i = 0; i < centers.size(); ++i) {
    if (ranks_->distributed()) ranks_->broadcast(centers[i], 0);
    static_cast<VectorQuantizeLayerImpl&>(layer(i)).embedding->weight.copy_(centers[i]);
  }
  initted.fill_(true);
}

ResidualQuantizerOutput ResidualVectorQuantizerImpl::forward(const torch::Tensor& input) {
  if (is_training()) init_embed(input);
  const bool train_gumbel = is_training() && options_.forward_mode == ForwardMode::kGumbelSoftmax;
  const ResidualPass walk = residual_pass(train_gumbel ? input : input.detach());
  torch::Tensor quantized = walk.aggregated;
  if (is_training() && !train_gumbel) {
    quantized = options_.rotation_trick ? rotation_trick(input, quantized) : input + (quantized - input).detach();
  }
  return output(walk, quantized, /*with_latents=*/!is_inference());
}

}  // namespace tzrec::nn::sid
