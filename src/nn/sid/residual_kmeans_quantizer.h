// RQ-KMeans' residual quantizer (TorchEasyRec ResidualKMeansQuantizer,
// tzrec/modules/sid/residual_kmeans_quantizer.py): L k-means codebooks
// (kmeans_quantize_layer.h) fitted once, offline, by train_offline(); forward() only assigns.
//
// State: "layers.<i>.centroids" [n_embed[i], embed_dim], "layers.<i>._is_initialized" [] bool.
// forward(input [B, D]) walks the layers as residual_quantizer.h describes (layers not fitted
// give code 0 and zero vectors); no latents; candidates only once every layer is fitted.
// train_offline(x [N, D]): per layer, residuals L2-normalised when normalize_residuals, then
// kmeans_fit (the faiss settings given) on the current residuals, every row assigned to its
// nearest centroid by faiss's index search (inner product when spherical), the centroid
// subtracted, and the centroids loaded into the layer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "nn/sid/kmeans_clustering.h"
#include "nn/sid/kmeans_quantize_layer.h"
#include "nn/sid/residual_quantizer.h"

namespace tzrec::nn::sid {

struct ResidualKMeansQuantizerOptions {
  int64_t embed_dim = 0;
  std::vector<int64_t> n_embed;  // per layer
  bool normalize_residuals = false;
  KMeansOptions kmeans;  // faiss.Kmeans settings of every layer
  CandidateOutputOptions candidate;
};

class ResidualKMeansQuantizerImpl : public ResidualQuantizerImpl {
 public:
  // config_path names the settings in errors (candidate settings: ConfigError).
  ResidualKMeansQuantizerImpl(ResidualKMeansQuantizerOptions options, const std::string& config_path = "sid");
  ResidualQuantizerOutput forward(const torch::Tensor& input);
  // Fits every layer (see the file comment); `inputs` [N, embed_dim] is not modified. Throws
  // tzrec::DataError when N is below the largest codebook or the rows hold NaN / Inf. With
  // `verbose`, logs each layer's reconstruction MSE against the input.
  void train_offline(const torch::Tensor& inputs, bool verbose = true);
  // Whether every layer holds fitted centroids.
  bool is_fitted() const;
  // The rows faiss keeps of a larger training set: max(n_embed) · max_points_per_centroid.
  int64_t default_fit_sample_size() const;
  const ResidualKMeansQuantizerOptions& options() const { return options_; }

 protected:
  bool candidates_available() const override { return is_fitted(); }

 private:
  ResidualKMeansQuantizerOptions options_;
  std::vector<KMeansQuantizeLayer> kmeans_layers_;
};
TORCH_MODULE(ResidualKMeansQuantizer);

}  // namespace tzrec::nn::sid
