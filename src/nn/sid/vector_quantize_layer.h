// The gradient-trained codebook layer of RQ-VAE (TorchEasyRec VectorQuantizeLayer,
// tzrec/modules/sid/vector_quantize.py).
//
// State: "embedding.weight" [n_embed, embed_dim], an nn.Embedding initialised by
// kaiming_uniform_ (a = 0: U(−√(6/embed_dim), √(6/embed_dim))).
// quantize(x [B, D]):
//   training, gumbel_softmax: w = gumbel_softmax(−distances(x), tau, hard) [B, K] (distances keep
//     their gradient), embeddings = w @ weight, ids = argmax(w);
//   training, ste: distances without gradient; ids = Sinkhorn's codes (use_sinkhorn, sinkhorn.h)
//     or argmin; embeddings = weight[ids] (the raw codebook vector: the model's straight-through
//     estimator is applied by the residual quantizer on the sum of the layers);
//   otherwise: the top-k nearest codes (quantize_layer.h's topk_output).
// distances: l2 = cdist(x, weight)² [B, K]; cosine = −normalize(x) · normalize(weight)ᵀ.
// No loss here: the commitment loss is the model's (loss/sid_commitment_loss.h).
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>

#include "nn/collectives.h"
#include "nn/sid/quantize_layer.h"
#include "nn/sid/sid_types.h"

namespace tzrec::nn::sid {

struct VectorQuantizeOptions {
  int64_t embed_dim = 0;
  int64_t n_embed = 0;
  ForwardMode forward_mode = ForwardMode::kSte;
  Distance distance = Distance::kL2;
  bool use_sinkhorn = true;
  int64_t sinkhorn_iters = 5;
  double sinkhorn_epsilon = 10.0;
  double gumbel_temperature = 1.0;
};

class VectorQuantizeLayerImpl : public QuantizeLayerImpl {
 public:
  // config_path names the settings in errors. Throws tzrec::ConfigError for use_sinkhorn with
  // gumbel_softmax (Sinkhorn would pick the ids, Gumbel the vectors) and for sinkhorn_epsilon ≤ 0
  // with use_sinkhorn (exp(−cost·ε) overflows).
  VectorQuantizeLayerImpl(const VectorQuantizeOptions& options, const std::string& config_path = "sid");
  QuantizeOutput quantize(const torch::Tensor& x, int64_t topk = 1) override;
  torch::Tensor codebook() const override { return embedding->weight; }
  // x [B, D] → [B, n_embed] (see the file comment); gradients flow to x and the codebook.
  torch::Tensor distances(const torch::Tensor& x) const;
  const VectorQuantizeOptions& options() const { return options_; }
  // The ranks Sinkhorn's sums run over (sinkhorn.h); unset: this process alone.
  void set_collectives(std::shared_ptr<const Collectives> ranks) { ranks_ = std::move(ranks); }

  torch::nn::Embedding embedding{nullptr};

 private:
  VectorQuantizeOptions options_;
  std::shared_ptr<const Collectives> ranks_ = std::make_shared<const Collectives>();
};
TORCH_MODULE(VectorQuantizeLayer);

}  // namespace tzrec::nn::sid
