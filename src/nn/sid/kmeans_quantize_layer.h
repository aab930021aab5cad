// The k-means codebook layer of RQ-KMeans (TorchEasyRec KMeansQuantizeLayer,
// tzrec/modules/sid/kmeans_quantize.py): centroids fitted offline (residual_kmeans_quantizer.h)
// and loaded here; quantize() only assigns.
//
// State (buffers): "centroids" [n_embed, embed_dim] float32 (zeros until loaded) and
// "_is_initialized" [] bool.
// quantize(x [B, D]) (no gradient):
//   not initialised: ids 0 and zero vectors (the model stays callable before the fit);
//   training: ids = argmin cdist(x, centroids), embeddings = centroids[ids];
//   otherwise: the top-k nearest centroids by squared L2 (quantize_layer.h's topk_output).
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>

#include "nn/sid/quantize_layer.h"

namespace tzrec::nn::sid {

class KMeansQuantizeLayerImpl : public QuantizeLayerImpl {
 public:
  // `name` (e.g. "model_config.sid_rqkmeans: _quantizer.layers.0") prefixes checkpoint errors.
  KMeansQuantizeLayerImpl(int64_t n_embed, int64_t embed_dim, std::string name = "kmeans layer");
  QuantizeOutput quantize(const torch::Tensor& x, int64_t topk = 1) override;
  torch::Tensor codebook() const override { return centroids; }
  // Copies `c` [n_embed, embed_dim] into the centroids and marks the layer initialised.
  // A shape mismatch fails a TORCH_CHECK.
  void load_centroids(const torch::Tensor& c);
  // Whether centroids were loaded (the "_is_initialized" buffer, restored with checkpoints).
  // Throws tzrec::CheckpointError when the flag is set but every centroid is zero: a state saved
  // in the middle of a fit (TorchEasyRec rejects it when loading).
  bool is_initialized() const;

  torch::Tensor centroids;
  torch::Tensor is_initialized_flag;  // "_is_initialized"

 private:
  std::string name_;
};
TORCH_MODULE(KMeansQuantizeLayer);

}  // namespace tzrec::nn::sid
