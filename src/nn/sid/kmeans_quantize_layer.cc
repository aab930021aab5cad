#include "nn/sid/kmeans_quantize_layer.h"

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::nn::sid {

KMeansQuantizeLayerImpl::KMeansQuantizeLayerImpl(int64_t n_embed, int64_t embed_dim, std::string name)
    : QuantizeLayerImpl(n_embed, embed_dim), name_(std::move(name)) {
  centroids = register_buffer("centroids", torch::zeros({n_embed, embed_dim}));
  is_initialized_flag = register_buffer("_is_initialized", torch::tensor(false));
}

void KMeansQuantizeLayerImpl::load_centroids(const torch::Tensor& c) {
  TORCH_CHECK(c.sizes() == centroids.sizes(), "centroids shape mismatch: expected ", centroids.sizes(), ", got ",
              c.sizes());
  torch::NoGradGuard no_grad;
  centroids.copy_(c.to(centroids.scalar_type()));
  is_initialized_flag.fill_(true);
}

bool KMeansQuantizeLayerImpl::is_initialized() const {
  if (!is_initialized_flag.item<bool>()) return false;
  if (centroids.abs().sum().item<double>() == 0.0) {
    throw CheckpointError(
        fmt::format("{}: _is_initialized is true but every centroid is zero: the checkpoint was "
                    "taken in the middle of the k-means fit; train again so that the fit completes "
                    "before the final checkpoint",
                    name_));
  }
  return true;
}

QuantizeOutput KMeansQuantizeLayerImpl::quantize(const torch::Tensor& x, int64_t topk) {
  torch::NoGradGuard no_grad;
  QuantizeOutput out;
  if (!is_initialized()) {
    out.ids = torch::zeros({x.size(0)}, torch::dtype(torch::kInt64).device(x.device()));
    out.embeddings = torch::zeros_like(x);
    return out;
  }
  const torch::Tensor d = torch::cdist(x.to(centroids.scalar_type()), centroids);
  if (is_training()) {
    out.ids = d.argmin(-1);
    out.embeddings = centroids.index_select(0, out.ids);
    return out;
  }
  return topk_output(d.pow(2), topk);
}

}  // namespace tzrec::nn::sid
