// SidRqkmeans (TorchEasyRec tzrec/models/sid_rqkmeans.py, docs/models/sid_rqkmeans.md;
// docs/tzrec-compatibility.md §4.1): residual k-means codebooks fitted once, after training, on a
// reservoir sample of the training embeddings; no gradient training.
//
//   training batches: the first feature group's rows go into a reservoir
//     (nn/sid/reservoir_sampler.h) of train_sample_size rows (0: max(codebook) ·
//     max_points_per_centroid, faiss's own subsample size); predictions "codes" = zeros [B, L];
//     loss "dummy_loss" = 0 · Σ _dummy_param (the only parameter, [1] zeros);
//   on_train_end(): train_offline of the quantizer (nn/sid/residual_kmeans_quantizer.h) on the
//     sample, with faiss_kmeans_kwargs (unset fields keep faiss's defaults); the trainer then
//     saves the final checkpoint with the centroids;
//   evaluation: "codes", and once fitted "x_hat" = the centroid sum and "recon_target" (the eval
//     metrics); inference: "codes" (+ candidates once fitted).
// State: "_dummy_param", "_quantizer.layers.<i>.centroids", "_quantizer.layers.<i>._is_initialized".
//
// Config rules: train_sample_size 0 or ≥ max(codebook) (ConfigError); faiss_kmeans_kwargs: nredo
// and max_points_per_centroid ≥ 1, every value ≤ 2147483647 (faiss's int fields); losses have no
// effect (warned). WORLD_SIZE > 1 → UsageError (single-process, as TorchEasyRec).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/sid/sid_model.h"
#include "nn/sid/reservoir_sampler.h"
#include "nn/sid/residual_kmeans_quantizer.h"

namespace tzrec::models {

class SidRqkmeans : public SidModel {
 public:
  SidRqkmeans(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
              std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;
  TensorMap loss(const TensorMap& predictions, const sparse::Batch& batch) override;
  // Fits the codebook on the reservoir (then emptied); false (with a warning) when it is empty.
  bool on_train_end() override;

  nn::sid::ResidualKMeansQuantizer& quantizer() { return quantizer_; }
  const nn::sid::ReservoirSampler& reservoir() const { return *reservoir_; }

 private:
  torch::Tensor dummy_param_;
  nn::sid::ResidualKMeansQuantizer quantizer_{nullptr};
  std::unique_ptr<nn::sid::ReservoirSampler> reservoir_;
};

}  // namespace tzrec::models
