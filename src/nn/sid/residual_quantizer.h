// The residual walk shared by the SID quantizers (TorchEasyRec ResidualQuantizer,
// tzrec/modules/sid/residual_quantizer.py): RQ-VAE's residual_vector_quantizer.h and RQ-KMeans'
// residual_kmeans_quantizer.h.
//
//   residual = input; aggregated = 0
//   for each layer i: residual = normalize(residual) when normalize_residuals (L2, eps 1e-12);
//       (code_i, q_i) = layers[i].quantize(residual); aggregated += q_i; residual −= q_i (detached)
//   semantic ID = (code_0, ..., code_{L-1})
//
// Candidate SIDs (CandidateOutputOptions) are produced only in inference mode (set_inference),
// when enabled and the codebook can produce them: the last layer is quantized with its top-k and
// candidate_codes [B, K, L] repeat the greedy prefix with each of those codes; candidate_scores
// [B, K] are their distances.
// Submodule: "layers" (a ModuleList: "layers.<i>.…").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "nn/sid/quantize_layer.h"
#include "nn/sid/sid_types.h"

namespace tzrec::nn::sid {

// The result of one residual walk (TorchEasyRec ResidualPassOutput).
struct ResidualPass {
  torch::Tensor cluster_ids;              // [B, L] int64
  torch::Tensor aggregated;               // [B, D] Σ q_i (with the layers' gradients)
  std::vector<torch::Tensor> cumulative;  // L × [B, D]: aggregated after each layer
  torch::Tensor candidate_codes;          // [B, K, L] or undefined
  torch::Tensor candidate_scores;         // [B, K] or undefined
};

class ResidualQuantizerImpl : public torch::nn::Module {
 public:
  // n_embed: codebook size per layer (≥ 1 each, at least one layer). config_path names the
  // settings in errors: ConfigError for candidate.topk outside [1, n_embed.back()] or a strategy
  // other than "last_layer_knn" (when enabled).
  ResidualQuantizerImpl(int64_t embed_dim, std::vector<int64_t> n_embed, bool normalize_residuals,
                        const CandidateOutputOptions& candidate, const std::string& config_path);

  // TorchEasyRec's is_inference: predict and export (candidate SIDs are produced only then).
  void set_inference(bool inference) { inference_ = inference; }
  bool is_inference() const { return inference_; }

  // The semantic IDs of input [B, D] without gradient: [B, L] int64.
  torch::Tensor get_codes(const torch::Tensor& input);
  // Σ codebook_i[codes[:, i]]: codes [B, L] → [B, D].
  torch::Tensor decode_codes(const torch::Tensor& codes);

  int64_t embed_dim() const { return embed_dim_; }
  int64_t n_layers() const { return static_cast<int64_t>(n_embed_.size()); }
  const std::vector<int64_t>& n_embed() const { return n_embed_; }
  bool normalize_residuals() const { return normalize_residuals_; }
  QuantizeLayerImpl& layer(size_t i) const { return *quantize_layers_.at(i); }

 protected:
  // Registers `layer` as layers.<index> (subclasses add theirs in order).
  void add_layer(std::shared_ptr<QuantizeLayerImpl> layer);
  // The walk above over `input` [B, D].
  ResidualPass residual_pass(const torch::Tensor& input);
  // Packs a walk: latents = stack(cumulative, 1) [B, L, D] when `with_latents`.
  static ResidualQuantizerOutput output(const ResidualPass& walk, const torch::Tensor& quantized, bool with_latents);
  // Whether the codebook can produce candidates now (k-means: only once fitted).
  virtual bool candidates_available() const { return true; }

 private:
  int64_t embed_dim_;
  std::vector<int64_t> n_embed_;
  bool normalize_residuals_;
  bool candidates_enabled_ = false;
  int64_t candidate_topk_ = 1;
  bool inference_ = false;
  torch::nn::ModuleList layers_;
  std::vector<std::shared_ptr<QuantizeLayerImpl>> quantize_layers_;
};

}  // namespace tzrec::nn::sid
