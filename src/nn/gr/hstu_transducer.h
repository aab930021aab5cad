// The HSTU transducer of the generative ranking models (TorchEasyRec's HSTUTransducer,
// tzrec/modules/gr/hstu_transducer.py; config HSTU): the embedding groups of a batch →
// "_input_preprocessor" (input_preprocessor.h: one jagged sequence per row, contextual items,
// history, targets) → "_positional_encoder" (optional) → dropout(input_dropout_ratio) →
// "_stu_module" (STUStack of attn_num_layers STULayers, optional mid-stack truncation) → each
// row's target items (with interleaved targets, the content item of each pair) →
// "_output_postprocessor" with the targets' timestamps → [Σ num_targets, D], in the batch's
// candidate order.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "nn/gr/input_preprocessor.h"
#include "nn/gr/output_postprocessor.h"
#include "nn/gr/positional_encoder.h"
#include "nn/gr/stu.h"

namespace tzrec::nn::gr {

struct HSTUOptions {
  STUOptions stu;  // contextual_seq_len < 0: the preprocessor's; scaling_seqlen < 0: the model's
  double input_dropout_ratio = 0.2;
  int64_t attn_num_layers = 3;
  std::optional<PositionalEncoderOptions> positional_encoder;
  InputPreprocessorOptions input_preprocessor;
  OutputPostprocessorOptions output_postprocessor;
  int64_t attn_truncation_split_layer = 0;
  int64_t attn_truncation_tail_len = 0;
};

// What the HSTU encoders share (TorchEasyRec's _HSTUPipelineBase): "_input_preprocessor" →
// "_positional_encoder" (optional; anchored on the grouped input `query_time_key` when set) →
// dropout(input_dropout_ratio) → "_stu_module", the truncation plan replayed on the timestamps;
// "_output_postprocessor" is the subclasses' to apply.
class HSTUPipelineImpl : public torch::nn::Module {
 public:
  int64_t output_dim() const { return embedding_dim_; }

 protected:
  // dims: the input widths and contextual layout (dims.output_embedding_dim is set from
  // options.stu.embedding_dim); scaling_seqlen: the model's max_seq_len (used when the STU
  // config leaves it unset). ConfigError naming config_path (the HSTU message) for bad settings.
  HSTUPipelineImpl(const HSTUOptions& options, InputPreprocessorDims dims, int64_t scaling_seqlen,
                   const std::string& config_path, std::string query_time_key = "");

  // The STU stack's output over each row's sequence (contextual items, history, targets).
  struct Encoded {
    torch::Tensor x;            // [L, D]
    torch::Tensor timestamps;   // [L]
    torch::Tensor lengths;      // [B] int64
    torch::Tensor num_targets;  // [B] int64
  };
  Encoded encode(const std::map<std::string, torch::Tensor>& grouped);

  int64_t embedding_dim_;
  double input_dropout_ratio_;
  std::string query_time_key_;
  std::shared_ptr<InputPreprocessor> preprocessor_;
  PositionalEncoder positional_encoder_{nullptr};
  STUStack stu_{nullptr};
  std::shared_ptr<OutputPostprocessor> postprocessor_;
};

class HSTUTransducerImpl : public HSTUPipelineImpl {
 public:
  HSTUTransducerImpl(const HSTUOptions& options, InputPreprocessorDims dims, int64_t scaling_seqlen,
                     const std::string& config_path);
  // grouped: the embedding group outputs (input_preprocessor.h) → [Σ num_targets, D]
  torch::Tensor forward(const std::map<std::string, torch::Tensor>& grouped);
};
TORCH_MODULE(HSTUTransducer);

// Several HSTUTransducers over the same batch, one per channel (TorchEasyRec's UltraHSTU mixture of
// transducers): "_transducers.<i>.", their candidate embeddings concatenated along the last dim
// → [Σ num_targets, Σ output_dim()].
class HSTUTransducerStackImpl : public torch::nn::Module {
 public:
  explicit HSTUTransducerStackImpl(std::vector<HSTUTransducer> transducers);
  torch::Tensor forward(const std::map<std::string, torch::Tensor>& grouped);

 private:
  std::vector<HSTUTransducer> transducers_;
};
TORCH_MODULE(HSTUTransducerStack);

}  // namespace tzrec::nn::gr
