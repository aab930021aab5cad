// The interface of one SID quantize layer (TorchEasyRec tzrec/modules/sid/quantize_layer.py),
// shared by the gradient-trained vector-quantize layer (vector_quantize_layer.h) and the k-means
// layer (kmeans_quantize_layer.h), so that a residual quantizer (residual_quantizer.h) drives
// either the same way.
//
// A layer owns a codebook [n_embed, embed_dim] (an nn.Embedding's weight or a centroid buffer);
// quantize() assigns rows to it. The evaluation path of both backends is topk_output(): the top-k
// nearest codes by ascending distance, slot 0 the chosen code.
#pragma once

#include <cstdint>
#include <utility>

#include <torch/torch.h>

#include "nn/sid/sid_types.h"

namespace tzrec::nn::sid {

class QuantizeLayerImpl : public torch::nn::Module {
 public:
  QuantizeLayerImpl(int64_t n_embed, int64_t embed_dim);
  // x: [B, D] → codes and vectors; `topk` nearest codes outside training (1 ≤ topk ≤ n_embed).
  virtual QuantizeOutput quantize(const torch::Tensor& x, int64_t topk = 1) = 0;
  // The codebook [n_embed, embed_dim] (live: gradients reach it where the backend trains it).
  virtual torch::Tensor codebook() const = 0;
  // codebook()[ids]: ids [B] int64 → [B, D].
  torch::Tensor lookup(const torch::Tensor& ids) const { return codebook().index_select(0, ids); }
  // (scores, ids) of the `topk` smallest distances per row, ascending; distances [B, n_embed].
  // topk outside [1, n_embed] fails a TORCH_CHECK (configs are checked where they are read).
  std::pair<torch::Tensor, torch::Tensor> nearest_neighbors(const torch::Tensor& distances, int64_t topk) const;
  // The evaluation output from distances [B, n_embed]: ids = the nearest code, embeddings =
  // lookup(ids), and the top-k codes and distances.
  QuantizeOutput topk_output(const torch::Tensor& distances, int64_t topk) const;

  int64_t n_embed() const { return n_embed_; }
  int64_t embed_dim() const { return embed_dim_; }

 private:
  int64_t n_embed_;
  int64_t embed_dim_;
};

}  // namespace tzrec::nn::sid
