// Types shared by the semantic-ID (SID) quantizers of nn/sid/ (TorchEasyRec
// tzrec/modules/sid/types.py): the forward modes and distances of the vector-quantize layers, the
// output of one quantize layer and of a residual quantizer, and the candidate-SID settings.
//
// Shapes: B rows, D = embed_dim, L = number of residual layers, K = candidate top-k. Codes are
// int64 indices into a layer's codebook; embeddings float32.
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>

namespace tzrec::nn::sid {

// How a vector-quantize layer assigns in training (TorchEasyRec QuantizeForwardMode): the
// straight-through estimator ("ste") or a hard Gumbel-Softmax ("gumbel_softmax"). Outside
// training both take the nearest code.
enum class ForwardMode { kSte, kGumbelSoftmax };

// Distance between an input and a codebook entry (TorchEasyRec distance_type): squared L2
// ("l2") or the negative cosine similarity ("cosine").
enum class Distance { kL2, kCosine };

// One quantize layer's output (TorchEasyRec QuantizeOutput).
struct QuantizeOutput {
  torch::Tensor embeddings;   // [B, D] the chosen codebook vectors
  torch::Tensor ids;          // [B] int64 codes
  torch::Tensor topk_ids;     // [B, K] int64 nearest codes, best first; undefined in training
  torch::Tensor topk_scores;  // [B, K] their distances, ascending; undefined in training
};

// A residual quantizer's output (TorchEasyRec ResidualQuantizerOutput).
struct ResidualQuantizerOutput {
  torch::Tensor cluster_ids;           // [B, L] int64: the semantic ID of each row
  torch::Tensor quantized_embeddings;  // [B, D] sum of the layers' vectors (STE-adjusted in training)
  torch::Tensor latents;               // [B, L, D] running sums after each layer; undefined when not built
  torch::Tensor candidate_codes;       // [B, K, L] int64; undefined unless candidates are output
  torch::Tensor candidate_scores;      // [B, K] float32; undefined unless candidates are output
};

// Inference-time candidate SIDs (TorchEasyRec SidCandidateOutputConfig): the greedy prefix of the
// first L - 1 codes with the last layer's `topk` nearest codes, best first (slot 0 is the greedy
// SID). Only strategy "last_layer_knn" exists.
struct CandidateOutputOptions {
  bool enabled = false;
  int64_t topk = 1;
  std::string strategy = "last_layer_knn";
};

}  // namespace tzrec::nn::sid
