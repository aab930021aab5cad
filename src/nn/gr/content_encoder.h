// The content encoders of the generative models (TorchEasyRec's tzrec/modules/gr/content_encoder.py;
// config GRContentEncoder): each sequence's history item embeddings (uih [Σ uih, Du]) and its
// candidates' (target [Σ targets, Dt]) made one width and concatenated per sequence
// (history rows, then candidate rows):
//   slice  (SliceContentEncoder, Dt ≥ Du): candidates cut to their first Du columns; width Du
//   pad    (PadContentEncoder, Dt > Du): history rows extended by one learned row
//          "_target_enrich_dummy_embeddings" [1, Dt − Du] ~ N(0, 0.1²); width Dt
//   mlp    (MLPContentEncoder): history through "uih_mlp", candidates through "target_mlp" (both
//          TorchEasyRec MLPs with the same output width); width that output
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <torch/torch.h>

#include "nn/mlp.h"

namespace tzrec::nn::gr {

class ContentEncoder : public torch::nn::Module {
 public:
  // uih [Σ uih, Du], target [Σ targets, Dt], uih_offsets / target_offsets [B + 1]
  // → [Σ uih + Σ targets, output_dim()]
  virtual torch::Tensor forward(const torch::Tensor& uih, const torch::Tensor& target,
                                const torch::Tensor& uih_offsets, const torch::Tensor& target_offsets) = 0;
  virtual int64_t output_dim() const = 0;
};

struct ContentEncoderOptions {
  std::string type;  // "slice_content_encoder" | "pad_content_encoder" | "mlp_content_encoder"
  MLPOptions uih_mlp, target_mlp;  // mlp_content_encoder
};

// config_path names the GRContentEncoder message in errors. ConfigError when the widths do not
// allow the type (slice: Dt < Du; pad: Dt ≤ Du; mlp: different output widths).
std::shared_ptr<ContentEncoder> make_content_encoder(const ContentEncoderOptions& options, int64_t uih_dim,
                                                     int64_t target_dim, const std::string& config_path);

}  // namespace tzrec::nn::gr
