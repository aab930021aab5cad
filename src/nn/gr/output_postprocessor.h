// The output postprocessors of the generative models (TorchEasyRec's
// tzrec/modules/gr/postprocessors.py; config GROutputPostprocessor): applied to the encoded
// embeddings x [L, D] with their timestamps ts [L].
//   l2norm_postprocessor             x / max(‖x‖₂, 1e-6)
//   layernorm_postprocessor          "_layer_norm" (torch LayerNorm(D), eps 1e-5)
//   timestamp_layernorm_postprocessor
//                                    for each period j (period_units[j] seconds, units_per_period[j]
//                                    units): a_j = ((⌊ts / period_units[j]⌋ mod units_per_period[j])
//                                    / units_per_period[j]) · 2 · 3.14; x' = [x, cos a_0, sin a_0,
//                                    cos a_1, sin a_1, ...]; "_layer_norm"("_time_feature_combiner"(x'))
//                                    (Linear(D + 2·J, D), xavier-uniform weight, zero bias); buffers
//                                    "_period_units" and "_units_per_period" [1, J] float
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace tzrec::nn::gr {

class OutputPostprocessor : public torch::nn::Module {
 public:
  // x [L, D], ts [L] → [L, D]
  virtual torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& ts) = 0;
};

struct OutputPostprocessorOptions {
  std::string type;  // "l2norm_postprocessor" | "layernorm_postprocessor" | "timestamp_layernorm_postprocessor"
  std::vector<int64_t> time_duration_period_units;
  std::vector<int64_t> time_duration_units_per_period;
};

// ConfigError naming config_path for an unset type or period lists of different lengths.
std::shared_ptr<OutputPostprocessor> make_output_postprocessor(const OutputPostprocessorOptions& options,
                                                               int64_t embedding_dim, const std::string& config_path);

}  // namespace tzrec::nn::gr
