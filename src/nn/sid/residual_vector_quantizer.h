// RQ-VAE's residual vector quantizer (TorchEasyRec ResidualVectorQuantizer,
// tzrec/modules/sid/residual_vector_quantizer.py): L gradient-trained codebooks
// (vector_quantize_layer.h) walked as residual_quantizer.h describes.
//
// State: "initted" [1] bool buffer (false until the k-means initialisation ran when kmeans_init,
// else true), "layers.<i>.embedding.weight" [n_embed[i], embed_dim].
// forward(input [B, D]):
//   training with kmeans_init, first call: every codebook from residual_kmeans() of this batch
//     (faiss settings niter 10, seed 123; no residual normalisation, as TorchEasyRec); on several
//     ranks rank 0 fits on its batch and broadcasts the codebooks (and first whether its batch is
//     large enough, so that every rank fails alike), as TorchEasyRec;
//   training, ste: the walk runs on input.detach() and the output carries the encoder gradient
//     by the straight-through estimator input + (Σq − input).detach(), or with rotation_trick by
//     the rotation trick (rotation_trick() below); the codebooks are trained by the commitment
//     loss through `latents`;
//   training, gumbel_softmax: the walk runs on the live input (its soft assignment is
//     differentiable), no estimator;
//   otherwise the nearest codes (and candidates in inference mode).
// latents [B, L, D] are built except in inference mode.
// gumbel_softmax turns Sinkhorn off and ignores rotation_trick, with a warning (as TorchEasyRec).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "nn/sid/kmeans_clustering.h"
#include "nn/sid/residual_quantizer.h"
#include "nn/sid/vector_quantize_layer.h"

namespace tzrec::nn::sid {

struct ResidualVectorQuantizerOptions {
  int64_t embed_dim = 0;
  std::vector<int64_t> n_embed;  // per layer
  ForwardMode forward_mode = ForwardMode::kSte;
  bool normalize_residuals = false;
  Distance distance = Distance::kL2;
  bool rotation_trick = false;
  bool kmeans_init = false;
  bool use_sinkhorn = true;
  int64_t sinkhorn_iters = 5;
  double sinkhorn_epsilon = 10.0;
  double gumbel_temperature = 1.0;
  CandidateOutputOptions candidate;
};

class ResidualVectorQuantizerImpl : public ResidualQuantizerImpl {
 public:
  // config_path names the settings in errors (ConfigError from the layers and the candidates).
  ResidualVectorQuantizerImpl(ResidualVectorQuantizerOptions options, const std::string& config_path = "sid");
  // Throws tzrec::DataError when the k-means initialisation batch has fewer rows than the largest
  // codebook.
  ResidualQuantizerOutput forward(const torch::Tensor& input);
  const ResidualVectorQuantizerOptions& options() const { return options_; }
  // The ranks of a distributed run (the k-means initialisation, the layers' Sinkhorn sums).
  void set_collectives(std::shared_ptr<const Collectives> ranks);

  torch::Tensor initted;

 private:
  void init_embed(const torch::Tensor& data);
  ResidualVectorQuantizerOptions options_;
  std::shared_ptr<const Collectives> ranks_ = std::make_shared<const Collectives>();
};
TORCH_MODULE(ResidualVectorQuantizer);

// Residual k-means (TorchEasyRec faiss_residual_kmeans): per layer, kmeans_fit of the current
// residuals [N, D] into n_clusters[i] centroids, then every row minus its nearest centroid.
// Returns the centroids per layer ([n_clusters[i], D] float32).
std::vector<torch::Tensor> residual_kmeans(const torch::Tensor& samples, const std::vector<int64_t>& n_clusters,
                                           const KMeansOptions& options);

// The rotation trick (arXiv:2410.06424, eq. 4.2) in place of the straight-through estimator:
// with x̂ = x / (‖x‖ + 1e-8), q̂ = q / (‖q‖ + 1e-8), r = normalize(x̂ + q̂) and λ = ‖q‖ / (‖x‖ + 1e-8)
// (all detached), returns λ · (x − 2 (x·r) r + 2 (x·x̂) q̂): the value of q with the gradient of x
// rotated towards q. x, quant: [B, D].
torch::Tensor rotation_trick(const torch::Tensor& x, const torch::Tensor& quant);

}  // namespace tzrec::nn::sid
