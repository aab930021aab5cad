// SidRqvae (TorchEasyRec tzrec/models/sid_rqvae.py, docs/models/sid_rqvae.md;
// docs/tzrec-compatibility.md §4.1): encoder MLP → residual vector quantizer → decoder MLP,
// trained end to end on the configured SID losses (sid_model.h).
//
//   _encoder: Sequential(MLP(input_dim, hidden_dims), Linear(hidden_dims[-1], embed_dim))
//   _decoder: Sequential(MLP(embed_dim, reversed hidden_dims), Linear(hidden_dims[0], input_dim))
//   _quantizer: nn/sid/residual_vector_quantizer.h ("initted", "layers.<i>.embedding.weight")
//   hidden_dims defaults to [input_dim / 2] (integer division); the MLPs are ReLU MLPs.
// Predictions, training and evaluation: "codes" [B, L], "x_hat" = decoder(quantized) [B, input_dim],
// "recon_target" = the input, "encoder_out" [B, embed_dim], "latents" [B, L, embed_dim]. With
// contrastive_config the paired group runs the same path: "encoder_out" / "latents" stack both
// views (main rows first), "recon_mask" = the non-pair rows, "embed_a" / "embed_b" the two
// reconstructions, "embed_a_ori" / "embed_b_ori" the two inputs, "pair_mask" = pair flag > 0.5.
// Inference (predict): "codes" only (+ candidates).
//
// Config rules (ConfigError naming the field): embed_dim ≥ 1; hidden_dims entries ≥ 1 (also the
// default); forward_mode "ste" | "gumbel_softmax"; distance_type "l2" | "cosine"; sinkhorn epsilon
// > 0 when enabled (and not with gumbel_softmax: turned off with a warning); contrastive_config
// and a contrastive_loss entry come together; its groups exist, the paired group is as wide as the
// main one and the flag group has width 1. WORLD_SIZE > 1 → NotSupportedError.
#pragma once

#include <string>
#include <vector>

#include "models/sid/sid_model.h"
#include "nn/sid/residual_vector_quantizer.h"

namespace tzrec::models {

class SidRqvae : public SidModel {
 public:
  SidRqvae(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
           std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;
  // The ranks of a distributed run also reach the quantizer (Sinkhorn sums, k-means broadcast).
  void set_process_group(dist::ProcessGroup* pg) override;

  nn::sid::ResidualVectorQuantizer& quantizer() { return quantizer_; }

 private:
  struct Pass {
    torch::Tensor z_e;
    nn::sid::ResidualQuantizerOutput quant;
    torch::Tensor x_hat;
  };
  Pass rqvae_pass(const torch::Tensor& x);

  bool use_contrastive_ = false;
  std::string pair_group_;
  std::string pair_flag_group_;
  torch::nn::Sequential encoder_{nullptr};
  torch::nn::Sequential decoder_{nullptr};
  nn::sid::ResidualVectorQuantizer quantizer_{nullptr};
};

}  // namespace tzrec::models
