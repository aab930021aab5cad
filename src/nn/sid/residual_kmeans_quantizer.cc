#include "nn/sid/residual_kmeans_quantizer.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"

namespace tzrec::nn::sid {

ResidualKMeansQuantizerImpl::ResidualKMeansQuantizerImpl(ResidualKMeansQuantizerOptions options,
                                                         const std::string& config_path)
    : ResidualQuantizerImpl(options.embed_dim, options.n_embed, options.normalize_residuals, options.candidate,
                            config_path),
      options_(std::move(options)) {
  for (size_t i = 0; i < options_.n_embed.size(); ++i) {
    KMeansQuantizeLayer layer(options_.n_embed[i], options_.embed_dim,
                              fmt::format("{}: _quantizer.layers.{}", config_path, i));
    kmeans_layers_.push_back(layer);
    add_layer(layer.ptr());
  }
}

ResidualQuantizerOutput ResidualKMeansQuantizerImpl::forward(const torch::Tensor& input) {
  const ResidualPass walk = residual_pass(input);
  return output(walk, walk.aggregated, /*with_latents=*/false);
}

bool ResidualKMeansQuantizerImpl::is_fitted() const {
  return std::all_of(kmeans_layers_.begin(), kmeans_layers_.end(),
                     [](const KMeansQuantizeLayer& l) { return l->is_initialized(); });
}

int64_t ResidualKMeansQuantizerImpl::default_fit_sample_size() const {
  return *std::max_element(options_.n_embed.begin(), options_.n_embed.end()) * options_.kmeans.max_points_per_centroid;
}

void ResidualKMeansQuantizerImpl::train_offline(const torch::Tensor& inputs, bool verbose) {
  torch::NoGradGuard no_grad;
  TORCH_CHECK(inputs.dim() == 2 && inputs.size(1) == embed_dim(), "train_offline inputs must be [N, ", embed_dim(),
              "], got ", inputs.sizes());
  torch::Tensor x = inputs.detach().to(torch::kCPU, torch::kFloat32).contiguous().clone();
  const int64_t n = x.size(0);
  const int64_t max_k = *std::max_element(options_.n_embed.begin(), options_.n_embed.end());
  if (n < max_k) {
    throw DataError(
        fmt::format("k-means fit of the SID codebook needs at least {} rows (the largest codebook), got "
                    "{}; train on more rows or use smaller codebooks",
                    max_k, n));
  }
  namespace F = torch::nn::functional;
  torch::Tensor out = torch::zeros_like(x);
  torch::Tensor x0 = verbose && normalize_residuals() ? x.clone() : torch::Tensor();
  if (verbose) log::info("fitting a {}-layer SID codebook by k-means on {} rows of dim {}", n_layers(), n, embed_dim());
  for (int64_t i = 0; i < n_layers(); ++i) {
    if (normalize_residuals()) x = F::normalize(x, F::NormalizeFuncOptions().dim(-1));
    KMeansResult fit = kmeans_fit(x, options_.n_embed[static_cast<size_t>(i)], options_.kmeans);
    const torch::Tensor ids = kmeans_search(x, fit.centroids, options_.kmeans.spherical).first;
    const torch::Tensor q = fit.centroids.index_select(0, ids);
    out += q;
    x -= q;
    if (verbose) {
      const torch::Tensor ref = normalize_residuals() ? x0 : out + x;
      log::info("k-means SID codebook layer {}: reconstruction mse {}", i, (out - ref).pow(2).mean().item<double>());
    }
    kmeans_layers_[static_cast<size_t>(i)]->load_centroids(fit.centroids);
  }
}

}  // namespace tzrec::nn::sid
